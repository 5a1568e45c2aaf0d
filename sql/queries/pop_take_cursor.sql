-- The cursor of group $2 on partition $1 taken: its newest state (n, the
-- first visible entry of a backward probe) locked, unless it is leased or
-- waiting for its retry delay, or another transaction holds it (SKIP
-- LOCKED). One replaced by a transaction that committed after this
-- statement's snapshot was taken is locked all the same (a state is never
-- updated): the caller checks it (cursor_state_replaced.sql). The
-- state is locked in a subquery of its own, probed by its whole key: joined
-- directly, the planner probed the cursor's id alone and filtered the seq,
-- reading every state a held snapshot keeps (6 ms a pop after five
-- minutes of a held snapshot, 2026-12-06). The locked state's key
-- (cursor_id, state_seq) goes to the statement that replaces it
-- (pop_lease_cursor.sql, pop_release_cursor.sql). Then
-- the segment scan (the same in segments_scan.sql and pop_take_cursor.sql):
-- the segments of a partition holding the offsets from .. from + want, in
-- order, at most a limit of them: the segment covering from (if any is left)
-- and those after it that start inside the range.
WITH c AS MATERIALIZED (
    SELECT s.cursor_id, s.seq AS state_seq, s.committed, s.head_offset, s.head_attempts,
           GREATEST(s.committed + 1, $3) AS from_offset
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
SELECT c.cursor_id, c.state_seq, c.head_offset, c.head_attempts, c.from_offset, s.*
  FROM c LEFT JOIN LATERAL (SELECT base_offset, end_offset, frame_count, (extract(epoch FROM created_at) * 1000000)::int8 AS created_us, blob
      FROM queen.log_segments
     WHERE partition_id = $1 AND base_offset >= COALESCE(
           (SELECT max(base_offset) FROM queen.log_segments
             WHERE partition_id = $1 AND base_offset <= c.from_offset), c.from_offset)
       AND base_offset < c.from_offset + $4
     ORDER BY base_offset LIMIT $5) s ON true
 ORDER BY s.base_offset
