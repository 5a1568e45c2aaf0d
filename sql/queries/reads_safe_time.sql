-- Now (the statement's clock) and the start of the oldest open transaction
-- of this database that holds a transaction id, i.e. has written (NULL:
-- none, or none this role may see: pg_stat_activity shows other roles'
-- xact_start only to superusers and members of pg_read_all_stats).
SELECT (extract(epoch FROM statement_timestamp()) * 1000000)::int8 AS now_us,
       (SELECT (extract(epoch FROM min(a.xact_start)) * 1000000)::int8
          FROM pg_catalog.pg_stat_activity a
         WHERE a.datid = (SELECT oid FROM pg_catalog.pg_database WHERE datname = current_database())
           AND a.backend_xid IS NOT NULL AND a.pid <> pg_catalog.pg_backend_pid()) AS oldest_write_us,
       (SELECT count(*) FROM pg_catalog.pg_stat_activity a
         WHERE a.pid <> pg_catalog.pg_backend_pid() AND a.xact_start IS NULL
           AND a.backend_type = 'client backend' AND a.state IS NULL)::int8 AS hidden
