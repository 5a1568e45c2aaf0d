-- The tenant $1's queues a pop by namespace $2 / task $3 takes from, by
-- priority. A namespace given is probed through its index, in a branch of
-- its own: as ($2 IS NULL OR namespace = $2), every queue is read.
SELECT queue_id, queue, window_buffer, delayed_processing, lease_time FROM (
    SELECT id AS queue_id, name AS queue, window_buffer, delayed_processing, lease_time, priority
      FROM queen.queues
     WHERE tenant_id = $1 AND namespace = $2 AND ($3::text IS NULL OR task = $3)
    UNION ALL
    SELECT id, name, window_buffer, delayed_processing, lease_time, priority
      FROM queen.queues
     WHERE $2::text IS NULL AND tenant_id = $1 AND ($3::text IS NULL OR task = $3)) q
ORDER BY priority DESC, queue_id
