UPDATE queen.log_partitions
  SET log_start = GREATEST(log_start, $2),
      oldest_live_at = (SELECT created_at FROM queen.log_segments
                         WHERE partition_id = $1 AND base_offset >= GREATEST(log_start, $2)
                         ORDER BY base_offset LIMIT 1)
WHERE id = $1
