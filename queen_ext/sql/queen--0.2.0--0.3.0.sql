-- queen 0.2.0 -> 0.3.0 (ALTER EXTENSION queen UPDATE).
--
-- 0.3.0 adds the objects Queen's HTTP API needs beyond 0.2.0: new tables
-- and new functions; no existing table, column or function changes. Each
-- section below creates what one area adds, exactly as a fresh install of
-- 0.3.0 creates it. The script ends, as every update script does, by
-- re-applying the privileges of sql/privileges.sql as 0.3.0 ships them.
-- This file is frozen once shipped.

-- ---------------------------------------------------------------------
-- Messages and traces
-- ---------------------------------------------------------------------

-- ---------------------------------------------------------------------
-- Consumer groups and dead letters
-- ---------------------------------------------------------------------

CREATE  FUNCTION "delete_queue_if_exists"(
	"queue" TEXT /* Option < & str > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'delete_queue_if_exists_wrapper';

CREATE  FUNCTION "consumer_groups_summary"() RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'consumer_groups_summary_wrapper';

CREATE  FUNCTION "consumer_group_detail"(
	"consumer_group" TEXT /* & str */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'consumer_group_detail_wrapper';

CREATE  FUNCTION "consumer_groups_lagging"(
	"min_lag_seconds" bigint DEFAULT 3600 /* i64 */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'consumer_groups_lagging_wrapper';

CREATE  FUNCTION "consumer_group_drop"(
	"consumer_group" TEXT, /* & str */
	"queue" TEXT DEFAULT NULL, /* Option < & str > */
	"delete_metadata" bool DEFAULT true /* bool */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'consumer_group_drop_wrapper';

CREATE  FUNCTION "consumer_group_set_timestamp"(
	"consumer_group" TEXT, /* & str */
	"subscription_timestamp" TEXT /* & str */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'consumer_group_set_timestamp_wrapper';

CREATE  FUNCTION "consumer_group_seek_queue"(
	"consumer_group" TEXT, /* & str */
	"queue" TEXT, /* & str */
	"options" jsonb DEFAULT '{}' /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'consumer_group_seek_queue_wrapper';

CREATE  FUNCTION "consumer_group_seek_partition"(
	"consumer_group" TEXT, /* & str */
	"queue" TEXT, /* & str */
	"partition" TEXT, /* & str */
	"options" jsonb DEFAULT NULL /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'consumer_group_seek_partition_wrapper';

CREATE  FUNCTION "consumer_group_positions"(
	"body" jsonb /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'consumer_group_positions_wrapper';

CREATE  FUNCTION "dlq_list"(
	"options" jsonb DEFAULT '{}' /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'dlq_list_wrapper';

CREATE  FUNCTION "dlq_replay"(
	"id" bigint, /* i64 */
	"options" jsonb DEFAULT '{}' /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'dlq_replay_wrapper';

CREATE  FUNCTION "dlq_retry_message"(
	"partition_id" bigint, /* i64 */
	"transaction_id" TEXT /* & str */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'dlq_retry_message_wrapper';

CREATE  FUNCTION "dlq_purge"(
	"queue" TEXT, /* Option < & str > */
	"consumer_group" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'dlq_purge_wrapper';

-- ---------------------------------------------------------------------
-- Resources, timers and offset reads
-- ---------------------------------------------------------------------

CREATE  FUNCTION "resource_queues"() RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'resource_queues_wrapper';

CREATE  FUNCTION "resource_queue"(
	"queue" TEXT /* & str */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'resource_queue_wrapper';

CREATE  FUNCTION "resource_namespaces"() RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'resource_namespaces_wrapper';

CREATE  FUNCTION "resource_tasks"() RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'resource_tasks_wrapper';

CREATE  FUNCTION "queue_depth"(
	"queue" TEXT, /* & str */
	"consumer_group" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'queue_depth_wrapper';

CREATE  FUNCTION "partition_backlog"(
	"queue" TEXT DEFAULT NULL, /* Option < & str > */
	"max_rows" bigint DEFAULT NULL /* Option < i64 > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'partition_backlog_wrapper';

CREATE  FUNCTION "timer_peek"(
	"queue" TEXT, /* & str */
	"timer_key" TEXT /* & str */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'timer_peek_wrapper';

CREATE  FUNCTION "timers_list"(
	"queue" TEXT, /* & str */
	"after" TEXT DEFAULT NULL, /* Option < & str > */
	"max_rows" bigint DEFAULT NULL /* Option < i64 > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'timers_list_wrapper';

CREATE  FUNCTION "kv_namespaces"() RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'kv_namespaces_wrapper';

CREATE  FUNCTION "kv_list"(
	"body" jsonb /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'kv_list_wrapper';

CREATE  FUNCTION "fetch"(
	"body" jsonb /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'fetch_wrapper';

CREATE  FUNCTION "partitions_changed"(
	"body" jsonb /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'partitions_changed_wrapper';

-- ---------------------------------------------------------------------
-- The operator's switches
-- ---------------------------------------------------------------------

CREATE TABLE queen.system_state (
    key        text PRIMARY KEY,
    paused     boolean NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE FUNCTION queen."system_switches"(
	"surface" TEXT,
	"changes" jsonb DEFAULT NULL
) RETURNS json
LANGUAGE c
AS 'MODULE_PATHNAME', 'system_switches_wrapper';

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
    queen.transaction, queen.transaction_binary,
    queen.kv, queen.kv_get, queen.kv_set, queen.kv_cas, queen.kv_delete, queen.kv_incr, queen.kv_usage,
    queen.locks,
    queen.timers, queen.timer_schedule, queen.timer_cancel,
    queen.list_queues, queen.get_queue, queen.queue_counts, queen.overview,
    queen.dlq_messages, queen.get_dlq_message,
    queen.consumer_groups_list, queen.consumer_group_get,
    queen.consumer_groups_summary, queen.consumer_group_detail, queen.consumer_groups_lagging,
    queen.consumer_group_positions, queen.dlq_list,
    queen.retention_explain, queen.retention_timeseries, queen.table_sizes, queen.sweeper_metrics
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
    queen.system_switches
    TO queen_admin;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA queen_internal TO queen_admin;

GRANT EXECUTE ON FUNCTION
    queen.overview, queen.list_queues, queen.queue_counts, queen.retention_explain,
    queen.retention_timeseries, queen.table_sizes, queen.sweeper_metrics, queen.kv_usage,
    queen.consumer_groups_summary, queen.consumer_groups_lagging
    TO pg_monitor;
GRANT EXECUTE ON FUNCTION
    queen.resource_queues, queen.resource_queue, queen.resource_namespaces, queen.resource_tasks,
    queen.queue_depth, queen.partition_backlog
    TO pg_monitor;
