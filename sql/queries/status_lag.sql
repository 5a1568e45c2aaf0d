-- Per consumer-group cursor with a backlog: how many live messages it has
-- not consumed, and how long ago the first of them was written (the
-- created_at of the segment holding it). The partition's last offset is the
-- end of its newest segment (log_start - 1 without one).
SELECT GREATEST(l.last_offset - GREATEST(c.committed, p.log_start - 1), 0)::int8 AS offset_lag,
       (extract(epoch FROM now() - s.created_at) * 1000)::int8 AS time_lag_ms
  FROM queen.log_consumers c
  JOIN queen.log_partitions p ON p.id = c.partition_id
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
  CROSS JOIN LATERAL (SELECT COALESCE(t.end_offset, p.log_start - 1) AS last_offset) l
  LEFT JOIN LATERAL (
       SELECT created_at FROM queen.log_segments
        WHERE partition_id = p.id AND base_offset <= GREATEST(c.committed + 1, p.log_start)
        ORDER BY base_offset DESC LIMIT 1) s ON true
 WHERE l.last_offset > GREATEST(c.committed, p.log_start - 1)
 LIMIT $1
