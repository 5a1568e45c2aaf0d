-- The watermark move of a retention step: log_start past the run deleted,
-- oldest_live_at from the first segment left (NULL: none), and
-- last_write_at kept at least the deleted run's newest created_at ($3), so
-- that a partition emptied by the step still knows its last write (the
-- partition's last write is its newest segment's, and this when none is
-- left).
UPDATE queen.log_partitions
  SET log_start = GREATEST(log_start, $2),
      oldest_live_at = (SELECT created_at FROM queen.log_segments
                         WHERE partition_id = $1 AND base_offset >= GREATEST(log_start, $2)
                         ORDER BY base_offset LIMIT 1),
      last_write_at = GREATEST(last_write_at, $3)
WHERE id = $1
