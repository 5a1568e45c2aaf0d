-- The segments of the listed partitions written within from..=to, newest
-- first, at most a limit of them, without their blobs: where each is and
-- how many bytes it stores (created_at never decreases with the offset of a
-- partition, so each partition is read backwards from its end). With a
-- cursor ($5 created_at, $6 partition, $7 base offset) only the segments
-- after it in this order are read.
SELECT s.partition_id, s.base_offset,
       (extract(epoch FROM s.created_at) * 1000000)::int8 AS created_us,
       octet_length(s.blob)::int8 AS bytes
  FROM unnest($1::int8[]) AS p(id)
  CROSS JOIN LATERAL (
      SELECT partition_id, base_offset, created_at, blob
        FROM queen.log_segments
       WHERE partition_id = p.id AND created_at >= $2 AND created_at <= $3
         AND ($5::timestamptz IS NULL OR (created_at, partition_id, base_offset) < ($5, $6, $7))
       ORDER BY base_offset DESC LIMIT $4) s
 ORDER BY s.created_at DESC, s.partition_id DESC, s.base_offset DESC
 LIMIT $4
