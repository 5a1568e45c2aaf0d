-- Which partitions p (with their cursor c, NULL if the group has none, of
-- the queue w) are candidates: they hold messages this group has not done,
-- their lease (if any) has expired, their retry delay has passed, and
-- their newest message is past the queue's window buffer. The partition's
-- last offset and last write are its newest segment's (t, one backward
-- probe of the segments' key; none when retention deleted them all).
-- Shared by the candidate window (pop_candidate_window.sql) and
-- pop_candidates_everywhere.sql.
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
 WHERE t.end_offset >= p.log_start
   AND (w.window_secs = 0 OR GREATEST(p.last_write_at, t.created_at) <= now() - make_interval(secs => w.window_secs))
   AND (c.partition_id IS NULL OR (
         c.committed < t.end_offset
         AND (c.lease_id IS NULL OR c.lease_expires_at <= now())
         AND (c.retry_at IS NULL OR c.retry_at <= now())))
