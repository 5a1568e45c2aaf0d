-- (after a seek's target) The group's cursors on the target's partitions
-- that are not where the seek puts them (or hold a lease or a retry): each
-- newest state locked in partition order, replaced by one at the target
-- with no lease. A state another transaction replaced while this one
-- waited for it is left out (its lock finds it deleted); the caller runs
-- this again until it moves none.
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
), gone AS (
    DELETE FROM queen.log_cursor_states d USING prev
     WHERE d.cursor_id = prev.cursor_id AND d.seq = prev.seq
 RETURNING d.cursor_id, d.seq, prev.committed
)
INSERT INTO queen.log_cursor_states (cursor_id, seq, committed)
SELECT cursor_id, seq + 1, committed FROM gone
RETURNING 1 AS moved
