-- queen 0.10.0 -> 0.11.0 (ALTER EXTENSION queen UPDATE).
--
-- 0.11.0 adds streaming queries: their registrations and their state per
-- source partition (queen.stream_queries, queen.stream_state, marked for
-- pg_dump), the functions that register a query, read its state and run a
-- cycle, and the administrator's listing and deletion. The empty-partition
-- cleanup keeps a partition a query still holds state for. A consumer
-- group stores whether it conflates (queen.consumer_groups.conflation). The script
-- ends, as every update script that adds functions does, by re-applying the
-- privileges of sql/privileges.sql as 0.11.0 ships them. This file is
-- frozen once shipped.

-- A streaming query, registered by name: the fingerprint of its operator
-- chain (config_hash) and the queues it reads and writes (as the
-- registration named them; nothing checks them later). The id is what
-- every later call names.
CREATE TABLE queen.stream_queries (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name         text COLLATE "C" NOT NULL UNIQUE,
    source_queue text NOT NULL,
    sink_queue   text,
    config_hash  text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- A query's state, per source partition and key: a JSON value the client's
-- operators read back (open windows, watermarks). A partition id, not a
-- foreign key: deleting a queue deletes its partitions' state explicitly.
CREATE TABLE queen.stream_state (
    query_id     uuid NOT NULL REFERENCES queen.stream_queries (id) ON DELETE CASCADE,
    partition_id bigint NOT NULL,
    key          text COLLATE "C" NOT NULL,
    value        jsonb NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (query_id, partition_id, key)
) WITH (
    -- Windows open and close all the time; truncation's ACCESS EXCLUSIVE
    -- would stall every cycle.
    vacuum_truncate = off,
    autovacuum_vacuum_scale_factor = 0.05
);
-- A queue's deletion finds its partitions' state.
CREATE INDEX idx_stream_state_partition ON queen.stream_state (partition_id);

REVOKE ALL ON queen.stream_queries, queen.stream_state FROM PUBLIC;

-- A consumer group's conflation policy, stored when the group registers.
ALTER TABLE queen.consumer_groups ADD COLUMN conflation boolean NOT NULL DEFAULT false;

SELECT pg_catalog.pg_extension_config_dump('queen.stream_queries', '');
SELECT pg_catalog.pg_extension_config_dump('queen.stream_state', '');

-- Whether a partition may be reclaimed by the empty-partition cleanup: both
-- its timestamps older than the cutoff, no segment left, no dead letter
-- pointing into it, no streaming query's state kept for it, and no live
-- lease on it. The one place the veto lives:
-- the candidate scan and the re-check under the row locks both call it.
CREATE OR REPLACE FUNCTION queen_internal.log_partition_dead_v1(p_pid bigint, p_cutoff timestamptz)
RETURNS boolean
LANGUAGE sql STABLE PARALLEL SAFE AS $$
    SELECT EXISTS (
        SELECT 1
          FROM queen.log_partitions p
         WHERE p.id = p_pid
           AND p.created_at < p_cutoff
           AND p.last_write_at < p_cutoff
           AND NOT EXISTS (SELECT 1 FROM queen.log_segments s WHERE s.partition_id = p.id)
           AND NOT EXISTS (SELECT 1 FROM queen.log_dlq d WHERE d.partition_id = p.id)
           AND NOT EXISTS (SELECT 1 FROM queen.stream_state st WHERE st.partition_id = p.id)
           AND NOT EXISTS (SELECT 1 FROM queen.log_consumers c
                            WHERE c.partition_id = p.id AND c.lease_id IS NOT NULL
                              AND c.lease_expires_at > now()))
$$;

CREATE  FUNCTION "stream_cycle"(
	"body" jsonb, /* Option < JsonbArg > */
	"producer" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'stream_cycle_wrapper';

CREATE  FUNCTION "stream_delete"(
	"name" TEXT /* Option < & str > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'stream_delete_wrapper';

CREATE  FUNCTION "stream_queries"(
	"after" TEXT DEFAULT NULL, /* Option < & str > */
	"limit" INT DEFAULT 100 /* Option < i32 > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'stream_queries_wrapper';

CREATE  FUNCTION "stream_register"(
	"body" jsonb /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'stream_register_wrapper';

CREATE  FUNCTION "stream_state_get"(
	"body" jsonb /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'stream_state_get_wrapper';

-- The privileges, as sql/privileges.sql gives them in 0.11.0.
--
-- queen: who may call what. Applied last by CREATE EXTENSION queen.
--
-- Tables are reached only through functions. Every function runs with the
-- owner's rights (SECURITY DEFINER) and a pinned search_path, so no object
-- of the caller's (a function or an operator in a schema they own) is ever
-- picked up inside one. Three kinds of caller:
--   queen_app    the message path (push, pop, ack, renew, transaction), KV,
--                locks, timers, and reads of queues and their messages
--   queen_admin  also configuration, deletion, dead-letter retry and
--                delete, consumer-group admin, KV quotas, and the
--                maintenance cycles and steps run by hand (queen_internal)
--   pg_monitor   the monitoring readers
-- Roles are cluster-wide: a second database installing queen reuses them,
-- and a role granted queen_app may use queen in every database of the
-- cluster that has it and lets it connect (docs/security.md).
-- Every update script (queen_ext/sql/) ends with the statements below as its
-- version has them, so an updated database has these rights too, functions
-- the update adds included (docs/upgrades.md).

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
-- Streaming queries: registration, state reads, cycles and the listing for
-- queen_app (the listing for pg_monitor too), deleting a query and its
-- state for queen_admin.
GRANT EXECUTE ON FUNCTION
    queen.stream_register, queen.stream_state_get, queen.stream_cycle, queen.stream_queries
    TO queen_app;
GRANT EXECUTE ON FUNCTION queen.stream_queries TO pg_monitor;
GRANT EXECUTE ON FUNCTION queen.stream_delete TO queen_admin;
