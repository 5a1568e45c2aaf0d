-- A schema not yet updated to 0.5.0, whose queen.log_consumers is a table
-- of rows updated in place (catalog/cursors.rs): as the statement of the
-- same name one level up was before, with no state key (NULL).
-- pop_take_cursor.sql, and the deleted offsets of the batch's range
-- (from .. from + want), in order: used once queen.log_deleted exists.
WITH c AS MATERIALIZED (
    SELECT NULL::int8 AS cursor_id, NULL::int8 AS state_seq, committed, head_offset, head_attempts,
           GREATEST(committed + 1, $3) AS from_offset,
           ARRAY(SELECT d.message_offset FROM queen.log_deleted d
                  WHERE d.partition_id = $1 AND d.message_offset >= GREATEST(committed + 1, $3)
                    AND d.message_offset < GREATEST(committed + 1, $3) + $4
                  ORDER BY d.message_offset) AS deleted
      FROM queen.log_consumers
     WHERE partition_id = $1 AND consumer_group = $2
       AND (lease_id IS NULL OR lease_expires_at <= now())
       AND (retry_at IS NULL OR retry_at <= now())
       FOR UPDATE SKIP LOCKED)
SELECT c.cursor_id, c.state_seq, c.head_offset, c.head_attempts, c.from_offset, c.deleted, s.*
  FROM c LEFT JOIN LATERAL (SELECT base_offset, end_offset, frame_count, (extract(epoch FROM created_at) * 1000000)::int8 AS created_us, blob
      FROM queen.log_segments
     WHERE partition_id = $1 AND base_offset >= COALESCE(
           (SELECT max(base_offset) FROM queen.log_segments
             WHERE partition_id = $1 AND base_offset <= c.from_offset), c.from_offset)
       AND base_offset < c.from_offset + $4
     ORDER BY base_offset LIMIT $5) s ON true
 ORDER BY s.base_offset
