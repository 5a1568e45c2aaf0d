-- The candidate partitions of the queues $1 (window buffers $2, scan
-- positions $6, '' for none; $7 partitions read at most per queue), each
-- queue's found by its candidate window (pop_candidate_window.sql and
-- pop_candidate_filter.sql, which follow, then pop_candidates_close.sql).
-- Among them, the partitions the group never read come first, then the
-- longest released or expired. now() comes back in epoch microseconds.
SELECT k.id, k.name, w.queue_id, k.log_start, k.fresh, k.lap,
       (extract(epoch FROM now()) * 1000000)::int8 AS now_us
  FROM (SELECT u.queue_id, u.window_secs, u.after, NULL::int8[] AS hints
          FROM unnest($1::int8[], $2::int4[], $6::text[]) AS u(queue_id, window_secs, after)) w
 CROSS JOIN LATERAL (
