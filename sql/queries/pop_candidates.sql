-- The candidate partitions of the queues $1 (window buffers $2, scan
-- positions $6, '' for none), each queue's found by the candidate scan
-- (pop_candidate_scan.sql, which follows, then pop_candidates_close.sql).
-- Among them, the partitions the group never read come first, then the
-- longest released or expired. now() comes back in epoch microseconds.
SELECT k.id, k.name, w.queue_id, k.log_start, k.fresh, k.lap,
       (extract(epoch FROM now()) * 1000000)::int8 AS now_us
  FROM unnest($1::int8[], $2::int4[], $6::text[]) AS w(queue_id, window_secs, after)
 CROSS JOIN LATERAL (
