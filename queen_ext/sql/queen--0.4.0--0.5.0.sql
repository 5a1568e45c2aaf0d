-- queen 0.4.0 -> 0.5.0 (ALTER EXTENSION queen UPDATE).
--
-- 0.5.0 marks every table that holds user state, and every sequence whose
-- position must go on, with pg_extension_config_dump, so that pg_dump
-- writes their rows and a restore brings them back (docs/durability.md).
-- The list and its order are those of sql/backup.sql.
--
-- It also drops queen.log_partitions.last_offset: a push no longer updates
-- its partition's row (a snapshot held open elsewhere made every push walk
-- a growing chain of its versions); the last offset is the newest
-- segment's end, or log_start - 1 when none is left. A partition whose
-- segments are all gone gets log_start past its last offset first, so its
-- offsets go on from there.
--
-- And it replaces the table queen.log_consumers by cursors written once
-- and their states, inserted and deleted, never updated (below); the name
-- stays, as a view. The script ends, as every update script
-- does, by re-applying the privileges of sql/privileges.sql as 0.5.0 ships
-- them. This file is frozen once shipped.

UPDATE queen.log_partitions p
   SET log_start = p.last_offset + 1
 WHERE p.log_start < p.last_offset + 1
   AND NOT EXISTS (SELECT 1 FROM queen.log_segments s WHERE s.partition_id = p.id);
ALTER TABLE queen.log_partitions DROP COLUMN last_offset;

-- The cursors: queen.log_consumers, a row updated by every pop, ack and
-- renewal, becomes a cursor row written once (queen.log_cursors) and its
-- states (queen.log_cursor_states), each call inserting the next state and
-- deleting the one it replaces; queen.log_consumers is now the view of each
-- cursor with its newest state. Every cursor moves over as it is, its
-- state as seq 0.
CREATE TABLE queen.log_cursors (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    partition_id   bigint NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    consumer_group text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (partition_id, consumer_group)
);

-- A cursor's states, seq 0 first; the newest (highest seq) is the
-- cursor's state, and every writer deletes the one it replaces. No foreign
-- key (a key checked on every pop and ack, and a lock on the cursor row
-- each time): the three deleters of cursors (a group's delete, a queue's,
-- the empty-partition cleanup) delete their states explicitly.
--   committed       every offset <= committed is done for this group
--   lease_*         the batch handed out: lease_start..lease_end, one byte of
--                   state per offset in lease_state (0 open, 1 done, 2 failed,
--                   3 retry)
--   head_offset     the offset whose deliveries head_attempts counts
CREATE TABLE queen.log_cursor_states (
    cursor_id        bigint NOT NULL,
    seq              bigint NOT NULL,
    committed        bigint NOT NULL,
    lease_id         uuid,
    lease_expires_at timestamptz,
    lease_start      bigint,
    lease_end        bigint,
    lease_state      bytea,
    head_offset      bigint,
    head_attempts    integer NOT NULL DEFAULT 0,
    retry_at         timestamptz,
    PRIMARY KEY (cursor_id, seq)
) WITH (
    -- A row inserted and deleted per pop, ack and renewal: vacuum on a
    -- dead-row count, never throttled; no heap truncation (it takes ACCESS
    -- EXCLUSIVE and would stall every pop and ack).
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);
-- Lease renewal and multi-partition acks find their states by lease id.
CREATE INDEX idx_log_cursor_states_lease ON queen.log_cursor_states (lease_id) WHERE lease_id IS NOT NULL;
-- A cursor's newest state is read by a backward probe of (cursor_id, seq)
-- that stops at the first visible entry. The statistics count only live
-- states, one per cursor, and with one row expected the planner may read a
-- cursor's states in key order and sort them instead: every state a
-- snapshot held open elsewhere keeps from being pruned (a pop took 16 ms
-- after eight minutes, 2026-12-06). Telling it each cursor has many makes
-- the probe the cheaper plan.
ALTER TABLE queen.log_cursor_states ALTER COLUMN cursor_id SET (n_distinct = -0.05);

INSERT INTO queen.log_cursors (partition_id, consumer_group, created_at)
SELECT partition_id, consumer_group, created_at FROM queen.log_consumers
 ORDER BY partition_id, consumer_group;
INSERT INTO queen.log_cursor_states (cursor_id, seq, committed, lease_id, lease_expires_at, lease_start,
                                     lease_end, lease_state, head_offset, head_attempts, retry_at)
SELECT k.id, 0, c.committed, c.lease_id, c.lease_expires_at, c.lease_start, c.lease_end, c.lease_state,
       c.head_offset, c.head_attempts, c.retry_at
  FROM queen.log_consumers c
  JOIN queen.log_cursors k ON k.partition_id = c.partition_id AND k.consumer_group = c.consumer_group;
DROP TABLE queen.log_consumers;
-- Each cursor with its newest state: what every reader reads.
CREATE VIEW queen.log_consumers AS
SELECT k.partition_id, k.consumer_group, s.committed, s.lease_id, s.lease_expires_at,
       s.lease_start, s.lease_end, s.lease_state, s.head_offset, s.head_attempts, s.retry_at,
       k.created_at
  FROM queen.log_cursors k
 CROSS JOIN LATERAL (SELECT s.committed, s.lease_id, s.lease_expires_at, s.lease_start, s.lease_end,
                            s.lease_state, s.head_offset, s.head_attempts, s.retry_at
                       FROM queen.log_cursor_states s
                      WHERE s.cursor_id = k.id
                      ORDER BY s.seq DESC LIMIT 1) s;

SELECT pg_catalog.pg_extension_config_dump('queen.queues', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('queen.queues', 'id'), '');
SELECT pg_catalog.pg_extension_config_dump('queen.queue_kept_options', '');
SELECT pg_catalog.pg_extension_config_dump('queen.consumer_groups', '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_partitions', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('queen.log_partitions', 'id'), '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_segments', '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_txns', '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_cursors', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('queen.log_cursors', 'id'), '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_cursor_states', '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_dlq', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('queen.log_dlq', 'id'), '');
SELECT pg_catalog.pg_extension_config_dump('queen.queue_terminal_rollups', '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_deleted', '');
SELECT pg_catalog.pg_extension_config_dump('queen.message_traces', '');
SELECT pg_catalog.pg_extension_config_dump('queen.message_trace_names', '');
SELECT pg_catalog.pg_extension_config_dump('queen.retention_history', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('queen.retention_history', 'id'), '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_timers', '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_timers_failed', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('queen.log_timers_failed', 'id'), '');
SELECT pg_catalog.pg_extension_config_dump('queen.kv', '');
SELECT pg_catalog.pg_extension_config_dump('queen.kv_version_seq', '');
SELECT pg_catalog.pg_extension_config_dump('queen.kv_quota', '');
SELECT pg_catalog.pg_extension_config_dump('queen.system_state', '');
SELECT pg_catalog.pg_extension_config_dump('queen.ephemeral_queues', '');
SELECT pg_catalog.pg_extension_config_dump('queen.ephemeral_incarnation_seq', '');

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
