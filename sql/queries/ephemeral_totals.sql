-- The ephemeral queues over all: how many are declared or live, the bytes
-- they hold, and the last incarnation drawn.
SELECT (SELECT count(*) FROM queen.ephemeral_state s
          FULL JOIN queen.ephemeral_queues q ON q.queue = s.queue)::bigint AS queues,
       (SELECT coalesce(sum(t.bytes), 0) FROM queen.ephemeral_state s
         CROSS JOIN LATERAL (SELECT t.bytes FROM queen.ephemeral_tallies t
                              WHERE t.incarnation = s.incarnation
                              ORDER BY t.ver DESC LIMIT 1) t)::bigint AS bytes,
       (SELECT CASE WHEN is_called THEN last_value END
          FROM queen.ephemeral_incarnation_seq) AS epoch
