-- Live counts per queue matching $1 queue, $2 namespace, $3 task (NULL:
-- any), newest first, $4 rows from $5. Per partition: total = live
-- messages; each consumer group's cursor contributes what it has not
-- consumed (pending), what a live lease holds (processing) and what it
-- consumed that is still live (completed); a partition no group reads has
-- every live message pending. Dead letters are counted from log_dlq. A
-- partition's last offset is the end of its newest segment (log_start - 1
-- without one).
WITH q AS (
    SELECT id, name, namespace, task, priority, created_at
      FROM queen.queues
     WHERE ($1::text IS NULL OR name = $1) AND ($2::text IS NULL OR namespace = $2)
       AND ($3::text IS NULL OR task = $3)
     ORDER BY created_at DESC, id DESC LIMIT $4 OFFSET $5
), per_p AS (
    SELECT p.queue_id, p.id, l.last_offset + 1 - p.log_start AS total,
           COALESCE(sum(c.unconsumed - c.processing), l.last_offset + 1 - p.log_start) AS pending,
           COALESCE(sum(c.processing), 0) AS processing,
           COALESCE(sum(c.completed), 0) AS completed
      FROM queen.log_partitions p
      JOIN q ON q.id = p.queue_id
      LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                          WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
      CROSS JOIN LATERAL (SELECT COALESCE(t.end_offset, p.log_start - 1) AS last_offset) l
      LEFT JOIN LATERAL (
           SELECT GREATEST(l.last_offset - GREATEST(c.committed, p.log_start - 1), 0) AS unconsumed,
                  CASE WHEN c.lease_id IS NOT NULL AND c.lease_expires_at > now()
                       THEN GREATEST(LEAST(c.lease_end, l.last_offset) - GREATEST(c.committed, p.log_start - 1), 0)
                       ELSE 0 END AS processing,
                  GREATEST(LEAST(c.committed, l.last_offset) - (p.log_start - 1), 0) AS completed
             FROM queen.log_consumers c WHERE c.partition_id = p.id) c ON true
     GROUP BY p.queue_id, p.id, l.last_offset
)
SELECT q.id, q.name, q.namespace, q.task, q.priority,
       (extract(epoch FROM q.created_at) * 1000000)::int8 AS created_us,
       count(per_p.id)::int8 AS partitions,
       COALESCE(sum(per_p.total), 0)::int8 AS total,
       COALESCE(sum(per_p.pending), 0)::int8 AS pending,
       COALESCE(sum(per_p.processing), 0)::int8 AS processing,
       COALESCE(sum(per_p.completed), 0)::int8 AS completed,
       (SELECT count(*) FROM queen.log_dlq d WHERE d.queue_id = q.id)::int8 AS dead_letter
  FROM q LEFT JOIN per_p ON per_p.queue_id = q.id
 GROUP BY q.id, q.name, q.namespace, q.task, q.priority, q.created_at
 ORDER BY q.created_at DESC, q.id DESC
