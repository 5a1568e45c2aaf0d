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
-- offsets go on from there. The script ends, as every update script
-- does, by re-applying the privileges of sql/privileges.sql as 0.5.0 ships
-- them. This file is frozen once shipped.

UPDATE queen.log_partitions p
   SET log_start = p.last_offset + 1
 WHERE p.log_start < p.last_offset + 1
   AND NOT EXISTS (SELECT 1 FROM queen.log_segments s WHERE s.partition_id = p.id);
ALTER TABLE queen.log_partitions DROP COLUMN last_offset;

SELECT pg_catalog.pg_extension_config_dump('queen.queues', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('queen.queues', 'id'), '');
SELECT pg_catalog.pg_extension_config_dump('queen.queue_kept_options', '');
SELECT pg_catalog.pg_extension_config_dump('queen.consumer_groups', '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_partitions', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('queen.log_partitions', 'id'), '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_segments', '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_txns', '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_consumers', '');
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
