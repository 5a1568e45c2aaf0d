-- One sample of the database server ($1 host, $2 worker id) into the
-- minute's row: connections, size, and the commit, rollback and WAL rates
-- per second since the previous sample of the same server.
WITH d AS (
    SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = current_database()
), a AS (
    SELECT count(*)::int4 AS connections,
           (count(*) FILTER (WHERE state = 'active'))::int4 AS active,
           (count(*) FILTER (WHERE state LIKE 'idle%'))::int4 AS idle
      FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'
), w AS (
    SELECT CASE WHEN pg_is_in_recovery() THEN NULL
                ELSE pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::int8 END AS wal
), prev AS (
    SELECT sampled_at, xact_commit, xact_rollback, wal_bytes FROM queen.system_metrics
     WHERE hostname = $1 AND port = current_setting('port')::int4 AND worker_id = $2
     ORDER BY bucket_time DESC LIMIT 1
)
INSERT INTO queen.system_metrics AS m (
       bucket_time, hostname, port, worker_id, sample_count, sampled_at, connections,
       connections_active, connections_idle, max_connections, database_size_bytes,
       xact_commit, xact_rollback, wal_bytes, commits_per_second, rollbacks_per_second,
       wal_bytes_per_second)
SELECT date_trunc('minute', now()), $1, current_setting('port')::int4, $2, 1, now(),
       a.connections, a.active, a.idle, current_setting('max_connections')::int4,
       pg_database_size(current_database()), d.xact_commit, d.xact_rollback, w.wal,
       (d.xact_commit - p.xact_commit) / NULLIF(extract(epoch FROM now() - p.sampled_at), 0)::float8,
       (d.xact_rollback - p.xact_rollback) / NULLIF(extract(epoch FROM now() - p.sampled_at), 0)::float8,
       (w.wal - p.wal_bytes) / NULLIF(extract(epoch FROM now() - p.sampled_at), 0)::float8
  FROM d CROSS JOIN a CROSS JOIN w LEFT JOIN prev p ON true
ON CONFLICT (bucket_time, hostname, port, worker_id) DO UPDATE SET
       sample_count = m.sample_count + 1,
       sampled_at = EXCLUDED.sampled_at,
       connections = EXCLUDED.connections,
       connections_active = EXCLUDED.connections_active,
       connections_idle = EXCLUDED.connections_idle,
       max_connections = EXCLUDED.max_connections,
       database_size_bytes = EXCLUDED.database_size_bytes,
       xact_commit = EXCLUDED.xact_commit,
       xact_rollback = EXCLUDED.xact_rollback,
       wal_bytes = EXCLUDED.wal_bytes,
       commits_per_second = COALESCE(EXCLUDED.commits_per_second, m.commits_per_second),
       rollbacks_per_second = COALESCE(EXCLUDED.rollbacks_per_second, m.rollbacks_per_second),
       wal_bytes_per_second = COALESCE(EXCLUDED.wal_bytes_per_second, m.wal_bytes_per_second)
RETURNING 1 AS written
