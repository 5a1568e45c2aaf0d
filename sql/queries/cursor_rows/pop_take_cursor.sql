-- A schema not yet updated to 0.5.0, whose queen.log_consumers is a table
-- of rows updated in place (catalog/cursors.rs): as the statement of the
-- same name one level up was before, with no state key (NULL).
-- The segment scan (the same in segments_scan.sql and pop_take_cursor.sql):
-- the segments of a partition holding the offsets from .. from + want, in
-- order, at most a limit of them: the segment covering from (if any is left)
-- and those after it that start inside the range.
WITH c AS MATERIALIZED (
    SELECT NULL::int8 AS cursor_id, NULL::int8 AS state_seq, committed, head_offset, head_attempts,
           GREATEST(committed + 1, $3) AS from_offset
      FROM queen.log_consumers
     WHERE partition_id = $1 AND consumer_group = $2
       AND (lease_id IS NULL OR lease_expires_at <= now())
       AND (retry_at IS NULL OR retry_at <= now())
       FOR UPDATE SKIP LOCKED)
SELECT c.cursor_id, c.state_seq, c.head_offset, c.head_attempts, c.from_offset, s.*
  FROM c LEFT JOIN LATERAL (SELECT base_offset, end_offset, frame_count, (extract(epoch FROM created_at) * 1000000)::int8 AS created_us, blob
      FROM queen.log_segments
     WHERE partition_id = $1 AND base_offset >= COALESCE(
           (SELECT max(base_offset) FROM queen.log_segments
             WHERE partition_id = $1 AND base_offset <= c.from_offset), c.from_offset)
       AND base_offset < c.from_offset + $4
     ORDER BY base_offset LIMIT $5) s ON true
 ORDER BY s.base_offset
