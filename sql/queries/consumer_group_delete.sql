-- Group $1's cursors (on queue $2's partitions, when given) locked in
-- partition order and deleted; answers their ids, whose states the caller
-- deletes (cursor_states_delete.sql).
WITH locked AS (
    SELECT k.id FROM queen.log_cursors k JOIN queen.log_partitions p ON p.id = k.partition_id
     WHERE k.consumer_group = $1 AND ($2::int8 IS NULL OR p.queue_id = $2)
     ORDER BY k.partition_id FOR UPDATE OF k)
DELETE FROM queen.log_cursors k USING locked l WHERE k.id = l.id RETURNING k.id
