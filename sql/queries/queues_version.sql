-- A number that grows with every push: the sum of the next offsets of the
-- partitions of the tenant $1's queues named $2 (when given) and carrying
-- namespace $3 / task $4 (when given). A partition's next offset is one past
-- the end of its newest segment (log_start without one), so each push, which
-- adds a segment, raises it. A named queue is probed by its key, in a branch
-- of its own.
SELECT COALESCE(sum(COALESCE(t.end_offset, p.log_start - 1) + 1), 0)::int8 AS version
  FROM (SELECT q.id FROM queen.queues q
         WHERE q.tenant_id = $1 AND q.name = $2
           AND ($3::text IS NULL OR q.namespace = $3) AND ($4::text IS NULL OR q.task = $4)
        UNION ALL
        SELECT q.id FROM queen.queues q
         WHERE $2::text IS NULL AND q.tenant_id = $1
           AND ($3::text IS NULL OR q.namespace = $3) AND ($4::text IS NULL OR q.task = $4)) q
  JOIN queen.log_partitions p ON p.queue_id = q.id
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
