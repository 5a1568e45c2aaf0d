-- queen 0.5.0 -> 0.6.0 (ALTER EXTENSION queen UPDATE).
--
-- 0.6.0 keeps an ephemeral queue's tallies, its partitions' bounds and its
-- groups' cursors as versions, inserted and deleted, never updated
-- (docs/architecture.md, "MVCC"): a push, a pop or an ack of an ephemeral
-- queue updated a row of each in place, and a snapshot held open elsewhere
-- made every later call walk a growing chain of versions. The queue's row
-- (queen.ephemeral_state) and a partition's row keep only what is written
-- once; the tallies move to queen.ephemeral_tallies, the bounds to
-- queen.ephemeral_partition_states, and a cursor's key gains its version.
-- Every value moves over as version 0. The script ends, as every update
-- script does, by re-applying the privileges of sql/privileges.sql as
-- 0.6.0 ships them. This file is frozen once shipped.

CREATE UNLOGGED TABLE queen.ephemeral_tallies (
    incarnation  bigint NOT NULL,
    ver          bigint NOT NULL,
    depth        bigint NOT NULL DEFAULT 0,
    bytes        bigint NOT NULL DEFAULT 0,
    drops_bounds bigint NOT NULL DEFAULT 0,
    drops_ttl    bigint NOT NULL DEFAULT 0,
    drops_retry  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (incarnation, ver)
) WITH (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);
INSERT INTO queen.ephemeral_tallies (incarnation, ver, depth, bytes, drops_bounds, drops_ttl, drops_retry)
SELECT incarnation, 0, depth, bytes, drops_bounds, drops_ttl, drops_retry
  FROM queen.ephemeral_state;
ALTER TABLE queen.ephemeral_state
    DROP COLUMN depth, DROP COLUMN bytes, DROP COLUMN drops_bounds,
    DROP COLUMN drops_ttl, DROP COLUMN drops_retry;

CREATE UNLOGGED TABLE queen.ephemeral_partition_states (
    incarnation bigint NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    ver         bigint NOT NULL,
    tail        bigint NOT NULL DEFAULT 1,
    head        bigint NOT NULL DEFAULT 1,
    depth       bigint NOT NULL DEFAULT 0,
    bytes       bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (incarnation, partition, ver)
) WITH (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);
INSERT INTO queen.ephemeral_partition_states (incarnation, partition, ver, tail, head, depth, bytes)
SELECT incarnation, partition, 0, tail, head, depth, bytes
  FROM queen.ephemeral_partitions;
ALTER TABLE queen.ephemeral_partitions
    DROP COLUMN tail, DROP COLUMN head, DROP COLUMN depth, DROP COLUMN bytes;

ALTER TABLE queen.ephemeral_cursors ADD COLUMN ver bigint NOT NULL DEFAULT 0;
ALTER TABLE queen.ephemeral_cursors ALTER COLUMN ver DROP DEFAULT;
ALTER TABLE queen.ephemeral_cursors
    DROP CONSTRAINT ephemeral_cursors_pkey,
    ADD PRIMARY KEY (incarnation, partition, grp, ver);
ALTER TABLE queen.ephemeral_cursors SET (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);

-- ---------------------------------------------------------------------
-- Privileges (as sql/privileges.sql)
-- ---------------------------------------------------------------------


DO $$
BEGIN
    -- A role of these names made beforehand by someone else, able to log
    -- in, would receive every right below.
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_roles
                WHERE rolname IN ('queen_app', 'queen_admin') AND (rolcanlogin OR rolsuper)) THEN
        RAISE EXCEPTION 'role queen_app or queen_admin exists and can log in'
            USING ERRCODE = '42501',
                  HINT = 'they must be NOLOGIN group roles; grant them to login roles instead';
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'queen_app') THEN
        CREATE ROLE queen_app NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'queen_admin') THEN
        CREATE ROLE queen_admin NOLOGIN;
    END IF;
END
$$;
GRANT queen_app TO queen_admin;

REVOKE ALL ON SCHEMA queen, queen_internal FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA queen FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA queen FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA queen, queen_internal FROM PUBLIC;

-- The pin costs a call about 8 us (2026-12-01, pgbench, one connection, a
-- read-only call: 78.6 us without SECURITY DEFINER and the SET clause, 86.6
-- with both; a push of one message takes ~400 us).
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p
              WHERE p.pronamespace IN ('queen'::regnamespace, 'queen_internal'::regnamespace)
    LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s SECURITY DEFINER SET search_path = pg_catalog, pg_temp', f);
    END LOOP;
END
$$;

GRANT USAGE ON SCHEMA queen TO queen_app, pg_monitor;
GRANT USAGE ON SCHEMA queen_internal TO queen_admin;

GRANT EXECUTE ON FUNCTION
    queen.push, queen.push_text, queen.push_binary,
    queen.pop, queen.pop_frames, queen.queue_version,
    queen.ack, queen.ack_text, queen.renew_lease,
    queen.push_fused, queen.ack_fused, queen.renew_fused,
    queen.transaction, queen.transaction_binary,
    queen.kv, queen.kv_get, queen.kv_set, queen.kv_cas, queen.kv_delete, queen.kv_incr, queen.kv_usage,
    queen.locks,
    queen.timers, queen.timer_schedule, queen.timer_cancel,
    queen.list_queues, queen.get_queue, queen.queue_counts, queen.overview,
    queen.dlq_messages, queen.get_dlq_message,
    queen.consumer_groups_list, queen.consumer_group_get,
    queen.consumer_groups_summary, queen.consumer_group_detail, queen.consumer_groups_lagging,
    queen.consumer_group_positions, queen.dlq_list,
    queen.retention_explain, queen.retention_timeseries, queen.table_sizes, queen.sweeper_metrics,
    queen.maintenance_status
    TO queen_app;

-- The resource views, the timer reads and the reads by offset.
GRANT EXECUTE ON FUNCTION
    queen.resource_queues, queen.resource_queue, queen.resource_namespaces, queen.resource_tasks,
    queen.queue_depth, queen.partition_backlog,
    queen.timer_peek, queen.timers_list, queen.kv_namespaces, queen.kv_list,
    queen.fetch, queen.partitions_changed
    TO queen_app;

GRANT EXECUTE ON FUNCTION
    queen.configure, queen.delete_queue,
    queen.retry_failed_by_queue, queen.retry_dlq_message, queen.delete_dlq_message,
    queen.consumer_group_delete, queen.consumer_group_seek, queen.consumer_group_subscription,
    queen.kv_quota, queen.timers_set_aside,
    queen.delete_queue_if_exists,
    queen.consumer_group_drop, queen.consumer_group_set_timestamp,
    queen.consumer_group_seek_queue, queen.consumer_group_seek_partition,
    queen.dlq_replay, queen.dlq_retry_message, queen.dlq_purge,
    queen.system_switches, queen.shard_set
    TO queen_admin;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA queen_internal TO queen_admin;

-- Messages and traces: recording a trace and the readers for queen_app,
-- deleting a message for queen_admin.
GRANT EXECUTE ON FUNCTION
    queen.trace_record, queen.traces_for_message, queen.traces_by_name, queen.trace_names,
    queen.messages_list, queen.message_get
    TO queen_app;
GRANT EXECUTE ON FUNCTION queen.message_delete TO queen_admin;
-- Status and analytics readers.
GRANT EXECUTE ON FUNCTION
    queen.status, queen.status_queues, queen.status_queue, queen.status_analytics,
    queen.system_overview, queen.system_metrics_series, queen.worker_metrics_series,
    queen.queue_lag, queen.queue_ops, queen.retention_series, queen.metrics_summary,
    queen.stats_refresh
    TO queen_app, pg_monitor;
-- A front-end's report of its own figures: the front's role and admins only,
-- so an application can not write another producer's figures.
GRANT EXECUTE ON FUNCTION queen.front_metrics_report TO queen_admin;

GRANT EXECUTE ON FUNCTION
    queen.overview, queen.list_queues, queen.queue_counts, queen.retention_explain,
    queen.retention_timeseries, queen.table_sizes, queen.sweeper_metrics, queen.kv_usage,
    queen.consumer_groups_summary, queen.consumer_groups_lagging, queen.maintenance_status
    TO pg_monitor;
GRANT EXECUTE ON FUNCTION
    queen.resource_queues, queen.resource_queue, queen.resource_namespaces, queen.resource_tasks,
    queen.queue_depth, queen.partition_backlog
    TO pg_monitor;
-- Ephemeral queues: the message path and the reads for queen_app (the
-- reads for pg_monitor too), declaring, resetting and deleting a queue
-- for queen_admin.
GRANT EXECUTE ON FUNCTION
    queen.ephemeral_push, queen.ephemeral_pop, queen.ephemeral_ack,
    queen.ephemeral_queues, queen.ephemeral_depth
    TO queen_app;
GRANT EXECUTE ON FUNCTION queen.ephemeral_queues, queen.ephemeral_depth TO pg_monitor;
GRANT EXECUTE ON FUNCTION
    queen.ephemeral_configure, queen.ephemeral_reset, queen.ephemeral_delete
    TO queen_admin;
