-- The candidate partitions of the queues $1 (window buffers $2) for group
-- $3, found among all their partitions but those of $5 (the pop's memo:
-- found done, nothing pushed since), $4 at most: for a pop whose
-- candidate windows found none (a queue of many partitions, few of them
-- holding messages for the group, or none). The filter is
-- pop_candidate_filter.sql, which follows, then
-- pop_candidates_everywhere_close.sql. It reads every partition of the
-- queues and probes each one's cursor by its key (the caller plans it with
-- no sequential scan, hash or merge join: spi::exec_probing), so it costs
-- the queues' partitions: a hash join read the whole cursor key to find
-- the group's cursors, every queue's. It takes the partitions the group
-- never read first, then the longest released or expired. now() comes back
-- in epoch microseconds.
SELECT k.id, k.name, w.queue_id, k.log_start, k.fresh, 0 AS lap,
       (extract(epoch FROM now()) * 1000000)::int8 AS now_us
  FROM unnest($1::int8[], $2::int4[]) AS w(queue_id, window_secs)
 CROSS JOIN LATERAL (
       SELECT p.id, p.name, p.log_start, c.partition_id IS NULL AS fresh, c.lease_expires_at
         FROM queen.log_partitions p
         LEFT JOIN queen.log_consumers c ON c.partition_id = p.id AND c.consumer_group = $3
