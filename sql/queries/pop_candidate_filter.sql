-- Which partitions p (with their cursor c, NULL if the group has none, of
-- the queue w) are candidates: they hold messages this group has not done,
-- their lease (if any) has expired, their retry delay has passed, and
-- their newest message is past the queue's window buffer. Shared by the
-- candidate window (pop_candidate_window.sql) and
-- pop_candidates_everywhere.sql.
 WHERE p.last_offset >= p.log_start
   AND (w.window_secs = 0 OR p.last_write_at <= now() - make_interval(secs => w.window_secs))
   AND (c.partition_id IS NULL OR (
         c.committed < p.last_offset
         AND (c.lease_id IS NULL OR c.lease_expires_at <= now())
         AND (c.retry_at IS NULL OR c.retry_at <= now())))
