-- Messages and segments retention deleted between $1 and $2 in buckets of
-- $3 minutes from the epoch or, $5 given, of the calendar's $5 (minute,
-- hour, day) in the session's time zone, and how many deletions, by rule,
-- for queue $4 (NULL: any; a partition deleted since is not found by
-- queue); the '__x__' audit rows left out. Oldest first.
SELECT (extract(epoch FROM b.bucket) * 1000000)::int8 AS bucket_us,
       COALESCE(sum(h.messages_deleted) FILTER (WHERE h.retention_type = 'retention'), 0)::int8 AS retention,
       COALESCE(sum(h.messages_deleted) FILTER (WHERE h.retention_type = 'completed_retention'), 0)::int8 AS completed,
       COALESCE(sum(h.messages_deleted) FILTER (WHERE h.retention_type = 'max_wait_time_eviction'), 0)::int8 AS eviction,
       COALESCE(sum(h.messages_deleted), 0)::int8 AS total, count(*)::int8 AS events,
       COALESCE(sum(h.segments_deleted) FILTER (WHERE h.retention_type = 'retention'), 0)::int8 AS retention_segments,
       COALESCE(sum(h.segments_deleted) FILTER (WHERE h.retention_type = 'completed_retention'), 0)::int8 AS completed_segments,
       COALESCE(sum(h.segments_deleted) FILTER (WHERE h.retention_type = 'max_wait_time_eviction'), 0)::int8 AS eviction_segments,
       COALESCE(sum(h.segments_deleted), 0)::int8 AS total_segments,
       count(*) FILTER (WHERE h.retention_type = 'retention')::int8 AS retention_events,
       count(*) FILTER (WHERE h.retention_type = 'completed_retention')::int8 AS completed_events,
       count(*) FILTER (WHERE h.retention_type = 'max_wait_time_eviction')::int8 AS eviction_events
  FROM queen.retention_history h
 CROSS JOIN LATERAL (SELECT CASE WHEN $5::text IS NULL
                                 THEN to_timestamp(floor(extract(epoch FROM h.executed_at) / ($3 * 60)) * ($3 * 60))
                                 ELSE date_trunc($5, h.executed_at) END AS bucket) b
 WHERE h.executed_at >= $1 AND h.executed_at <= $2 AND h.retention_type NOT LIKE '\_\_%'
   AND ($4::text IS NULL OR h.partition_id IN (
        SELECT p.id FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $4))
 GROUP BY b.bucket ORDER BY b.bucket
