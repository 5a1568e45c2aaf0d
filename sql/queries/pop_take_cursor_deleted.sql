-- pop_take_cursor.sql, and the deleted offsets of the batch's range
-- (from .. from + want), in order: used once queen.log_deleted exists.
WITH c AS MATERIALIZED (
    SELECT s.cursor_id, s.seq AS state_seq, s.committed, s.head_offset, s.head_attempts,
           GREATEST(s.committed + 1, $3) AS from_offset,
           ARRAY(SELECT d.message_offset FROM queen.log_deleted d
                  WHERE d.partition_id = $1 AND d.message_offset >= GREATEST(s.committed + 1, $3)
                    AND d.message_offset < GREATEST(s.committed + 1, $3) + $4
                  ORDER BY d.message_offset) AS deleted
      FROM queen.log_cursors k
     CROSS JOIN LATERAL (SELECT n.seq FROM queen.log_cursor_states n
                          WHERE n.cursor_id = k.id ORDER BY n.seq DESC LIMIT 1) n
     CROSS JOIN LATERAL (SELECT s.cursor_id, s.seq, s.committed, s.head_offset, s.head_attempts
                           FROM queen.log_cursor_states s
                          WHERE s.cursor_id = k.id AND s.seq = n.seq
                            AND (s.lease_id IS NULL OR s.lease_expires_at <= now())
                            AND (s.retry_at IS NULL OR s.retry_at <= now())
                            FOR UPDATE SKIP LOCKED) s
     WHERE k.partition_id = $1 AND k.consumer_group = $2)
SELECT c.cursor_id, c.state_seq, c.head_offset, c.head_attempts, c.from_offset, c.deleted, s.*
  FROM c LEFT JOIN LATERAL (SELECT base_offset, end_offset, frame_count, (extract(epoch FROM created_at) * 1000000)::int8 AS created_us, blob
      FROM queen.log_segments
     WHERE partition_id = $1 AND base_offset >= COALESCE(
           (SELECT max(base_offset) FROM queen.log_segments
             WHERE partition_id = $1 AND base_offset <= c.from_offset), c.from_offset)
       AND base_offset < c.from_offset + $4
     ORDER BY base_offset LIMIT $5) s ON true
 ORDER BY s.base_offset
