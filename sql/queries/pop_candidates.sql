-- The candidate partitions of the queues $1 (window buffers $2, scan
-- positions $6, '' for none; hinted partitions $11[$8[k]:$10[k]], none when
-- $8[k] > $10[k]; $7 partitions read at most per queue, those of $9 passed
-- by), each
-- queue's found by its candidate window (pop_candidate_window.sql and
-- pop_candidate_filter.sql, which follow, then pop_candidates_close.sql).
-- Among them, the partitions the group never read come first, then the
-- longest released or expired. now() comes back in epoch microseconds.
SELECT k.id, k.name, w.queue_id, k.log_start, k.fresh, k.lap,
       (extract(epoch FROM now()) * 1000000)::int8 AS now_us
  FROM (SELECT u.queue_id, u.window_secs, u.after,
               CASE WHEN u.h_from <= u.h_to THEN ($11::int8[])[u.h_from:u.h_to] END AS hints
          FROM unnest($1::int8[], $2::int4[], $6::text[], $8::int4[], $10::int4[])
               AS u(queue_id, window_secs, after, h_from, h_to)) w
 CROSS JOIN LATERAL (
