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

-- Tables: messages deleted by an operator (tombstones) and the traces
-- consumers record (sql/schema/messages.sql).

-- A live message deleted by an operator: its frame stays in its segment
-- (segments are never rewritten) and every pop skips its offset, for every
-- consumer group, moving the cursor past it. Retention deletes these rows
-- with the segments they point into; a partition's deletion takes them along.
CREATE TABLE queen.log_deleted (
    partition_id   bigint NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    message_offset bigint NOT NULL,
    transaction_id text NOT NULL,
    deleted_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (partition_id, message_offset)
);

-- What a consumer recorded about a message while handling it. Keyed by the
-- message's address, with no foreign key: a trace never holds back the
-- deletion of a queue, a partition or a segment, and outlives them until
-- the metrics window ages it out.
CREATE TABLE queen.message_traces (
    id             uuid PRIMARY KEY,
    partition_id   bigint NOT NULL,
    transaction_id text NOT NULL,
    consumer_group text NOT NULL,
    event_type     text NOT NULL,
    data           jsonb NOT NULL,
    worker_id      text,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idx_message_traces_message ON queen.message_traces (partition_id, transaction_id, created_at);
-- The metrics purge walks traces oldest first.
CREATE INDEX idx_message_traces_created_at ON queen.message_traces (created_at);

-- The names a trace was filed under; the by-name read pages them oldest
-- first. created_at is the trace's, copied so a page is one index range.
CREATE TABLE queen.message_trace_names (
    trace_id   uuid NOT NULL REFERENCES queen.message_traces (id) ON DELETE CASCADE,
    trace_name text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (trace_id, trace_name)
);
CREATE INDEX idx_message_trace_names_name ON queen.message_trace_names (trace_name, created_at);

-- Functions: the trace recorder and readers, the message listing, reader
-- and delete.

CREATE  FUNCTION "trace_record"(
	"body" jsonb /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'trace_record_wrapper';

CREATE  FUNCTION "traces_for_message"(
	"partition_id" bigint, /* i64 */
	"transaction_id" TEXT /* & str */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'traces_for_message_wrapper';

CREATE  FUNCTION "traces_by_name"(
	"name" TEXT, /* & str */
	"row_limit" INT DEFAULT NULL, /* Option < i32 > */
	"row_offset" INT DEFAULT NULL /* Option < i32 > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'traces_by_name_wrapper';

CREATE  FUNCTION "trace_names"(
	"row_limit" INT DEFAULT NULL, /* Option < i32 > */
	"row_offset" INT DEFAULT NULL /* Option < i32 > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'trace_names_wrapper';

CREATE  FUNCTION "messages_list"(
	"filters" jsonb DEFAULT '{}' /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'messages_list_wrapper';

CREATE  FUNCTION "message_get"(
	"partition_id" bigint, /* i64 */
	"transaction_id" TEXT /* & str */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'message_get_wrapper';

CREATE  FUNCTION "message_delete"(
	"partition_id" bigint, /* i64 */
	"transaction_id" TEXT /* & str */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'message_delete_wrapper';

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
-- Status and metrics
-- ---------------------------------------------------------------------

-- queen: the metrics series, one row per minute: per queue and consumer
-- group, per producer of server-wide figures, and of the database itself.
-- Written by the metrics task (queen.metrics_interval_ms), read by the
-- status and analytics functions, trimmed after queen.metrics_retention_days
-- by the retention cycle's metrics purge.

-- Per (minute, queue, consumer group). The push counts and the transaction
-- count belong to the queue, not to a group: they are on the row whose
-- consumer_group is ''. Lag is what a pop saw: the age of each popped batch's
-- oldest message at the pop (lag_sum_ms / lag_count is the mean).
CREATE TABLE queen.queue_lag_metrics (
    bucket_time        timestamptz NOT NULL,
    queue_id           bigint NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    consumer_group     text NOT NULL,
    push_request_count bigint NOT NULL DEFAULT 0,
    push_message_count bigint NOT NULL DEFAULT 0,
    pop_request_count  bigint NOT NULL DEFAULT 0,
    pop_message_count  bigint NOT NULL DEFAULT 0,
    pop_empty_count    bigint NOT NULL DEFAULT 0,
    ack_request_count  bigint NOT NULL DEFAULT 0,
    ack_success_count  bigint NOT NULL DEFAULT 0,
    ack_failed_count   bigint NOT NULL DEFAULT 0,
    dlq_count          bigint NOT NULL DEFAULT 0,
    transaction_count  bigint NOT NULL DEFAULT 0,
    lag_count          bigint NOT NULL DEFAULT 0,
    lag_sum_ms         bigint NOT NULL DEFAULT 0,
    max_lag_ms         bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (bucket_time, queue_id, consumer_group)
);
CREATE INDEX idx_queue_lag_metrics_queue ON queen.queue_lag_metrics (queue_id, bucket_time);

-- Per (minute, producer of figures): the server-wide totals. worker_id
-- 'queen_ext' is the extension's metrics task (every backend's counts).
CREATE TABLE queen.worker_metrics (
    bucket_time        timestamptz NOT NULL,
    hostname           text NOT NULL,
    worker_id          text NOT NULL,
    pid                integer NOT NULL,
    push_request_count bigint NOT NULL DEFAULT 0,
    push_message_count bigint NOT NULL DEFAULT 0,
    pop_request_count  bigint NOT NULL DEFAULT 0,
    pop_message_count  bigint NOT NULL DEFAULT 0,
    pop_empty_count    bigint NOT NULL DEFAULT 0,
    ack_request_count  bigint NOT NULL DEFAULT 0,
    ack_success_count  bigint NOT NULL DEFAULT 0,
    ack_failed_count   bigint NOT NULL DEFAULT 0,
    dlq_count          bigint NOT NULL DEFAULT 0,
    transaction_count  bigint NOT NULL DEFAULT 0,
    lag_count          bigint NOT NULL DEFAULT 0,
    lag_sum_ms         bigint NOT NULL DEFAULT 0,
    max_lag_ms         bigint NOT NULL DEFAULT 0,
    db_connections     integer NOT NULL DEFAULT 0,
    PRIMARY KEY (bucket_time, hostname, worker_id)
);

-- Per (minute, database server): what the database itself reports. The
-- rates are per second since the previous sample of the same server.
CREATE TABLE queen.system_metrics (
    bucket_time          timestamptz NOT NULL,
    hostname             text NOT NULL,
    port                 integer NOT NULL,
    worker_id            text NOT NULL,
    sample_count         integer NOT NULL DEFAULT 1,
    sampled_at           timestamptz NOT NULL,
    connections          integer NOT NULL,
    connections_active   integer NOT NULL,
    connections_idle     integer NOT NULL,
    max_connections      integer NOT NULL,
    database_size_bytes  bigint NOT NULL,
    xact_commit          bigint NOT NULL,
    xact_rollback        bigint NOT NULL,
    wal_bytes            bigint,
    commits_per_second   double precision,
    rollbacks_per_second double precision,
    wal_bytes_per_second double precision,
    PRIMARY KEY (bucket_time, hostname, port, worker_id)
);

INSERT INTO queen.maintenance_leases (task) VALUES ('metrics') ON CONFLICT (task) DO NOTHING;

CREATE  FUNCTION "metrics_summary"() RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'metrics_summary_wrapper';

CREATE  FUNCTION "queue_lag"(
	"params" jsonb DEFAULT '{}' /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'queue_lag_wrapper';

CREATE  FUNCTION "queue_ops"(
	"params" jsonb DEFAULT '{}' /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'queue_ops_wrapper';

CREATE  FUNCTION "retention_series"(
	"params" jsonb DEFAULT '{}' /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'retention_series_wrapper';

CREATE  FUNCTION "stats_refresh"() RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'stats_refresh_wrapper';

CREATE  FUNCTION "status"(
	"params" jsonb DEFAULT '{}' /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'status_wrapper';

CREATE  FUNCTION "status_analytics"(
	"params" jsonb DEFAULT '{}' /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'status_analytics_wrapper';

CREATE  FUNCTION "status_queue"(
	"queue" TEXT /* & str */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'status_queue_wrapper';

CREATE  FUNCTION "status_queues"(
	"params" jsonb DEFAULT '{}' /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'status_queues_wrapper';

CREATE  FUNCTION "system_metrics_series"(
	"params" jsonb DEFAULT '{}' /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'system_metrics_series_wrapper';

CREATE  FUNCTION "system_overview"() RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'system_overview_wrapper';

CREATE  FUNCTION "worker_metrics_series"(
	"params" jsonb DEFAULT '{}' /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'worker_metrics_series_wrapper';

CREATE  FUNCTION queen_internal."metrics_sample"() RETURNS jsonb /* JsonB */
STRICT 
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'metrics_sample_wrapper';

CREATE  FUNCTION "front_metrics_report"(
	"worker_id" TEXT, /* & str */
	"hostname" TEXT, /* & str */
	"figures" jsonb /* pgrx :: JsonB */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'front_metrics_report_wrapper';

-- The maintenance tasks' state, for an operator (api/observe.rs).
CREATE  FUNCTION "maintenance_status"() RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'maintenance_status_wrapper';

-- This database as one shard of several behind a proxy (api/shard.rs).
CREATE  FUNCTION "shard_set"(
	"shard" INT /* i32 */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'shard_set_wrapper';

-- ---------------------------------------------------------------------
-- Ephemeral queues
-- ---------------------------------------------------------------------

-- queen: ephemeral queues. Their declared configuration is an ordinary
-- (logged) table and survives anything; their messages, cursors and leases
-- live in UNLOGGED tables: writing them costs no WAL, and PostgreSQL
-- empties them on crash recovery, so the contents are lost on a crash
-- (docs/ephemeral.md). A queue's incarnation (drawn from a logged
-- sequence, so never drawn twice) keys every row it holds and is written
-- into the ids it delivers: an id of an incarnation that is gone (a crash,
-- a reset, a delete) is answered stale.

-- The declared queues: options as configured (the closed list of
-- queen.ephemeral_configure), kept across restarts and crashes.
CREATE TABLE queen.ephemeral_queues (
    queue      text COLLATE "C" PRIMARY KEY,
    options    jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE SEQUENCE queen.ephemeral_incarnation_seq;

-- One row per live queue (declared or implicit): its incarnation, what it
-- holds and what it dropped. Absent after a crash: the next call draws a
-- new incarnation.
CREATE UNLOGGED TABLE queen.ephemeral_state (
    queue        text COLLATE "C" PRIMARY KEY,
    incarnation  bigint NOT NULL UNIQUE,
    depth        bigint NOT NULL DEFAULT 0,
    bytes        bigint NOT NULL DEFAULT 0,
    drops_bounds bigint NOT NULL DEFAULT 0,
    drops_ttl    bigint NOT NULL DEFAULT 0,
    drops_retry  bigint NOT NULL DEFAULT 0,
    created_at   timestamptz NOT NULL DEFAULT now()
);

-- A queue's partitions: sequence numbers [tail, head) may be stored.
CREATE UNLOGGED TABLE queen.ephemeral_partitions (
    incarnation bigint NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    tail        bigint NOT NULL DEFAULT 1,
    head        bigint NOT NULL DEFAULT 1,
    depth       bigint NOT NULL DEFAULT 0,
    bytes       bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (incarnation, partition)
);

CREATE UNLOGGED TABLE queen.ephemeral_messages (
    incarnation bigint NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    seq         bigint NOT NULL,
    payload     jsonb NOT NULL,
    bytes       integer NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (incarnation, partition, seq)
);

-- The consumer groups a queue has seen (queue mode is __QUEUE_MODE__): a
-- message is removed only once every one of them has passed it.
CREATE UNLOGGED TABLE queen.ephemeral_groups (
    incarnation bigint NOT NULL,
    grp         text COLLATE "C" NOT NULL,
    PRIMARY KEY (incarnation, grp)
);

-- A group's cursor in a partition: the next sequence number it is handed,
-- and how many messages were removed before it read them.
CREATE UNLOGGED TABLE queen.ephemeral_cursors (
    incarnation bigint NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    grp         text COLLATE "C" NOT NULL,
    next_seq    bigint NOT NULL,
    skipped     bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (incarnation, partition, grp)
);

-- Delivered, not yet acknowledged messages of a group ('-infinity': handed
-- back by a failed or retry ack, due at once).
CREATE UNLOGGED TABLE queen.ephemeral_leases (
    incarnation bigint NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    grp         text COLLATE "C" NOT NULL,
    seq         bigint NOT NULL,
    attempts    integer NOT NULL,
    lease_until timestamptz NOT NULL,
    PRIMARY KEY (incarnation, partition, grp, seq)
);

-- Incarnations ended by a reset or a delete, whose rows the push and pop
-- path removes in bounded steps (queen.ephemeral_cleanup_batch).
CREATE UNLOGGED TABLE queen.ephemeral_retired (
    incarnation bigint PRIMARY KEY,
    retired_at  timestamptz NOT NULL DEFAULT now()
);

CREATE  FUNCTION "ephemeral_ack"(
	"body" jsonb /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'ephemeral_ack_wrapper';

CREATE  FUNCTION "ephemeral_configure"(
	"queue" TEXT, /* & str */
	"options" jsonb DEFAULT NULL /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'ephemeral_configure_wrapper';

CREATE  FUNCTION "ephemeral_delete"(
	"queue" TEXT /* & str */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'ephemeral_delete_wrapper';

CREATE  FUNCTION "ephemeral_depth"(
	"queue" TEXT, /* & str */
	"consumer_group" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'ephemeral_depth_wrapper';

CREATE  FUNCTION "ephemeral_pop"(
	"queue" TEXT, /* & str */
	"partition" TEXT DEFAULT NULL, /* Option < & str > */
	"consumer_group" TEXT DEFAULT NULL, /* Option < & str > */
	"batch" bigint DEFAULT NULL, /* Option < i64 > */
	"auto_ack" bool DEFAULT false /* bool */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'ephemeral_pop_wrapper';

CREATE  FUNCTION "ephemeral_push"(
	"body" jsonb /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'ephemeral_push_wrapper';

CREATE  FUNCTION "ephemeral_queues"() RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'ephemeral_queues_wrapper';

CREATE  FUNCTION "ephemeral_reset"(
	"queue" TEXT /* & str */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'ephemeral_reset_wrapper';

-- ---------------------------------------------------------------------
-- Request fusion
-- ---------------------------------------------------------------------

-- Functions: many push, ack or renewal requests in one transaction, each
-- answered on its own (a front-end's fused calls).

CREATE  FUNCTION "push_fused"(
	"bodies" bytea[], /* Option < Array < '_, & [u8] > > */
	"binary" bool[], /* Option < Vec < Option < bool > > > */
	"producers" TEXT[] /* Option < Vec < Option < String > > > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'push_fused_wrapper';

CREATE  FUNCTION "ack_fused"(
	"bodies" TEXT[] /* Option < Vec < Option < String > > > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'ack_fused_wrapper';

CREATE  FUNCTION "renew_fused"(
	"lease_ids" TEXT[], /* Option < Vec < Option < String > > > */
	"seconds" INT[] /* Option < Vec < Option < i32 > > > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'renew_fused_wrapper';

-- ---------------------------------------------------------------------
-- Queue options
-- ---------------------------------------------------------------------

-- Table: the options of Queen's configure body that queen keeps and answers
-- back without acting on them (sql/schema/queues.sql).

-- Queue options of Queen's configure body that queen takes and answers back
-- without acting on them (ttl, retentionSinkHoldMaxSeconds, ...): the values
-- as the last configure left them, one object per queue, written only when
-- a configure names one. Their defaults live in Rust
-- (queen_ext/src/catalog/options.rs) as the other options' do.
CREATE TABLE queen.queue_kept_options (
    queue_id   bigint PRIMARY KEY REFERENCES queen.queues (id) ON DELETE CASCADE,
    options    jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
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
