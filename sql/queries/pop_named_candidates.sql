-- The queue named $2 (tenant $1) and its candidate partitions, found by
-- its candidate window (pop_candidate_window.sql and
-- pop_candidate_filter.sql, which follow, then
-- pop_named_candidates_close.sql) from the scan position $6 (NULL for
-- none), after the hinted partitions $8 (NULL for none), reading $7
-- partitions at most and passing by those of $9; one row with no partition when it finds none. The partitions the group never read come first, then the
-- longest released or expired. now() comes back in epoch microseconds.
SELECT q.id AS queue_id, q.name AS queue, q.window_buffer, q.delayed_processing, q.lease_time,
       k.id, k.name, k.log_start, k.fresh, k.lap, (extract(epoch FROM now()) * 1000000)::int8 AS now_us
  FROM queen.queues q
 CROSS JOIN LATERAL (SELECT q.id AS queue_id, q.window_buffer AS window_secs,
                            COALESCE($6, '') AS after, $8::int8[] AS hints) w
  LEFT JOIN LATERAL (
