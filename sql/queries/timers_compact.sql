-- Deletes up to $1 fired schedules: their timer rows (unless scheduled
-- again since: the row then names another message id), their claims and
-- their marks, each probed by its message id. Answers the rows deleted and
-- the marks among them.
WITH d AS MATERIALIZED (SELECT ARRAY(SELECT message_id FROM queen.log_timers_done LIMIT $1) AS ids),
t AS (DELETE FROM queen.log_timers t WHERE t.message_id = ANY ((SELECT ids FROM d)::uuid[]) RETURNING 1),
c AS (DELETE FROM queen.log_timer_claims c WHERE c.message_id = ANY ((SELECT ids FROM d)::uuid[]) RETURNING 1),
x AS (DELETE FROM queen.log_timers_done x WHERE x.message_id = ANY ((SELECT ids FROM d)::uuid[]) RETURNING 1)
SELECT (SELECT count(*) FROM t) + (SELECT count(*) FROM c) + (SELECT count(*) FROM x) AS deleted,
       (SELECT count(*) FROM x) AS done
