-- The segments of the listed partitions written within from..=to, newest
-- first, at most a limit of them (created_at never decreases with the offset
-- of a partition, so each partition is read backwards from its end).
SELECT s.partition_id, s.base_offset, s.end_offset, s.frame_count,
       (extract(epoch FROM s.created_at) * 1000000)::int8 AS created_us, s.blob
  FROM unnest($1::int8[]) AS p(id)
  CROSS JOIN LATERAL (
      SELECT partition_id, base_offset, end_offset, frame_count, created_at, blob
        FROM queen.log_segments
       WHERE partition_id = p.id AND created_at >= $2 AND created_at <= $3
       ORDER BY base_offset DESC LIMIT $4) s
 ORDER BY s.created_at DESC, s.partition_id, s.base_offset DESC
 LIMIT $4
