-- Where group $2's cursor goes on every partition of queue $1: 'beginning',
-- 'end' (the end of the partition's newest segment; without one, just
-- before log_start) or the last segment older than $4 ($3). Then the
-- group's cursors on those partitions whose newest state is not where the
-- seek puts them (or holds a lease or a retry): each such state locked in
-- partition order, and followed by one at the target with no lease. A state
-- replaced by a transaction that committed after this statement's snapshot
-- gets no follower (its seq + 1 is taken); every locked state answers a row
-- (moved false for those), and the caller runs this again until a run
-- answers none.
WITH target AS MATERIALIZED (
SELECT p.id AS pid,
       CASE $3 WHEN 'beginning' THEN p.log_start - 1
               WHEN 'end' THEN COALESCE(t.end_offset, p.log_start - 1)
               ELSE GREATEST(p.log_start - 1, COALESCE(
                   (SELECT s.end_offset FROM queen.log_segments s
                     WHERE s.partition_id = p.id AND s.created_at < $4::timestamptz
                     ORDER BY s.base_offset DESC LIMIT 1), -1)) END AS committed
  FROM queen.log_partitions p
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
 WHERE p.queue_id = $1
 ORDER BY p.id
), prev AS (
    SELECT s.cursor_id, s.seq, t.committed
      FROM target t
      JOIN queen.log_cursors k ON k.partition_id = t.pid AND k.consumer_group = $2
     CROSS JOIN LATERAL (SELECT n.seq FROM queen.log_cursor_states n
                          WHERE n.cursor_id = k.id ORDER BY n.seq DESC LIMIT 1) n
     CROSS JOIN LATERAL (SELECT s.cursor_id, s.seq FROM queen.log_cursor_states s
                          WHERE s.cursor_id = k.id AND s.seq = n.seq
                            AND NOT (s.committed = t.committed AND s.lease_id IS NULL
                                     AND s.head_offset IS NULL AND s.head_attempts = 0
                                     AND s.retry_at IS NULL)
                            FOR UPDATE) s
     ORDER BY t.pid
), put AS (
    INSERT INTO queen.log_cursor_states (cursor_id, seq, committed)
    SELECT cursor_id, seq + 1, committed FROM prev
    ON CONFLICT (cursor_id, seq) DO NOTHING
    RETURNING cursor_id
)
SELECT prev.cursor_id, put.cursor_id IS NOT NULL AS moved
  FROM prev LEFT JOIN put ON put.cursor_id = prev.cursor_id
