-- The segments a message listing chose, by (partition, base offset), with
-- their blobs.
SELECT s.partition_id, s.base_offset, s.end_offset, s.frame_count,
       (extract(epoch FROM s.created_at) * 1000000)::int8 AS created_us, s.blob
  FROM unnest($1::int8[], $2::int8[]) AS k(pid, base)
  JOIN queen.log_segments s ON s.partition_id = k.pid AND s.base_offset = k.base
