-- system_metrics between $1 and $2 in buckets of $3 minutes per server
-- (host $4, worker $5; NULL: any): each figure's mean weighted by
-- sample_count, minimum, maximum and last value. Oldest first.
SELECT m.hostname, m.port, m.worker_id,
       (extract(epoch FROM b.bucket) * 1000000)::int8 AS bucket_us,
       sum(m.sample_count)::int8 AS samples,
       (sum(m.connections * m.sample_count)::float8 / sum(m.sample_count)) AS connections_avg,
       min(m.connections)::float8 AS connections_min, max(m.connections)::float8 AS connections_max,
       (array_agg(m.connections ORDER BY m.bucket_time DESC))[1]::float8 AS connections_last,
       (sum(m.connections_active * m.sample_count)::float8 / sum(m.sample_count)) AS active_avg,
       min(m.connections_active)::float8 AS active_min, max(m.connections_active)::float8 AS active_max,
       (array_agg(m.connections_active ORDER BY m.bucket_time DESC))[1]::float8 AS active_last,
       (sum(m.connections_idle * m.sample_count)::float8 / sum(m.sample_count)) AS idle_avg,
       min(m.connections_idle)::float8 AS idle_min, max(m.connections_idle)::float8 AS idle_max,
       (array_agg(m.connections_idle ORDER BY m.bucket_time DESC))[1]::float8 AS idle_last,
       (sum(m.max_connections * m.sample_count)::float8 / sum(m.sample_count)) AS max_conn_avg,
       min(m.max_connections)::float8 AS max_conn_min, max(m.max_connections)::float8 AS max_conn_max,
       (array_agg(m.max_connections ORDER BY m.bucket_time DESC))[1]::float8 AS max_conn_last,
       (sum(m.database_size_bytes * m.sample_count)::float8 / sum(m.sample_count)) AS size_avg,
       min(m.database_size_bytes)::float8 AS size_min, max(m.database_size_bytes)::float8 AS size_max,
       (array_agg(m.database_size_bytes ORDER BY m.bucket_time DESC))[1]::float8 AS size_last,
       (sum(m.commits_per_second * m.sample_count) / NULLIF(sum(m.sample_count) FILTER (WHERE m.commits_per_second IS NOT NULL), 0)) AS commits_avg,
       min(m.commits_per_second) AS commits_min, max(m.commits_per_second) AS commits_max,
       (array_agg(m.commits_per_second ORDER BY m.bucket_time DESC))[1] AS commits_last,
       (sum(m.rollbacks_per_second * m.sample_count) / NULLIF(sum(m.sample_count) FILTER (WHERE m.rollbacks_per_second IS NOT NULL), 0)) AS rollbacks_avg,
       min(m.rollbacks_per_second) AS rollbacks_min, max(m.rollbacks_per_second) AS rollbacks_max,
       (array_agg(m.rollbacks_per_second ORDER BY m.bucket_time DESC))[1] AS rollbacks_last,
       (sum(m.wal_bytes_per_second * m.sample_count) / NULLIF(sum(m.sample_count) FILTER (WHERE m.wal_bytes_per_second IS NOT NULL), 0)) AS wal_avg,
       min(m.wal_bytes_per_second) AS wal_min, max(m.wal_bytes_per_second) AS wal_max,
       (array_agg(m.wal_bytes_per_second ORDER BY m.bucket_time DESC))[1] AS wal_last
  FROM queen.system_metrics m
 CROSS JOIN LATERAL (SELECT to_timestamp(floor(extract(epoch FROM m.bucket_time) / ($3 * 60)) * ($3 * 60)) AS bucket) b
 WHERE m.bucket_time >= $1 AND m.bucket_time <= $2
   AND ($4::text IS NULL OR m.hostname = $4) AND ($5::text IS NULL OR m.worker_id = $5)
 GROUP BY m.hostname, m.port, m.worker_id, b.bucket
 ORDER BY m.hostname, m.port, m.worker_id, b.bucket
