-- queen_proxy: the calls routed by one argument, as PL/Proxy functions with
-- the shard's own signatures: by queue (queen.route_queue), by KV namespace
-- (queen.route_namespace), by partition or dead-letter id (the shard is in
-- the id's high bits). The shard's function of the same name answers.

CREATE FUNCTION queen.configure(queue text, options jsonb DEFAULT '{}', mode text DEFAULT 'merge') RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.get_queue(queue text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.delete_queue(queue text) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.delete_queue_if_exists(queue text) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.queue_counts(queue text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.retention_explain(queue text, max_partitions integer DEFAULT 100) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.resource_queue(queue text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.queue_depth(queue text, consumer_group text DEFAULT NULL) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.status_queue(queue text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.retry_failed_by_queue(queue text, consumer_group text DEFAULT NULL, max_rows integer DEFAULT 100) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.dlq_purge(queue text, consumer_group text DEFAULT NULL) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.consumer_group_seek(consumer_group text, queue text, options jsonb DEFAULT '{}') RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.consumer_group_seek_queue(consumer_group text, queue text, options jsonb DEFAULT '{}') RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.consumer_group_seek_partition(consumer_group text, queue text, partition text, options jsonb DEFAULT NULL) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.timer_schedule(queue text, timer_key text, payload jsonb, delay_ms bigint, partition text DEFAULT NULL, transaction_id text DEFAULT NULL) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.timer_cancel(queue text, timer_key text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.timer_peek(queue text, timer_key text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.timers_list(queue text, after text DEFAULT NULL, max_rows bigint DEFAULT NULL) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.ephemeral_configure(queue text, options jsonb DEFAULT NULL) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.ephemeral_reset(queue text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.ephemeral_delete(queue text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.ephemeral_pop(queue text, partition text DEFAULT NULL, consumer_group text DEFAULT NULL, batch bigint DEFAULT NULL, auto_ack boolean DEFAULT false) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.ephemeral_depth(queue text, consumer_group text DEFAULT NULL) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.kv_get(ns text, key text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_namespace(ns);
$$;

CREATE FUNCTION queen.kv_set(ns text, key text, value jsonb, ttl_seconds bigint, forever boolean DEFAULT false) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_namespace(ns);
$$;

CREATE FUNCTION queen.kv_cas(ns text, key text, expect bigint, value jsonb, ttl_seconds bigint, forever boolean DEFAULT false) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_namespace(ns);
$$;

CREATE FUNCTION queen.kv_delete(ns text, key text, expect bigint DEFAULT NULL) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_namespace(ns);
$$;

CREATE FUNCTION queen.kv_incr(ns text, key text, delta bigint DEFAULT 1, ttl_seconds bigint DEFAULT NULL, forever boolean DEFAULT false, max bigint DEFAULT NULL) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_namespace(ns);
$$;

CREATE FUNCTION queen.kv_quota(ns text, max_keys bigint, max_bytes bigint) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_namespace(ns);
$$;

CREATE FUNCTION queen.message_get(partition_id bigint, transaction_id text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_partition(partition_id);
$$;

CREATE FUNCTION queen.message_delete(partition_id bigint, transaction_id text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_partition(partition_id);
$$;

CREATE FUNCTION queen.traces_for_message(partition_id bigint, transaction_id text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_partition(partition_id);
$$;

CREATE FUNCTION queen.get_dlq_message(partition_id bigint, transaction_id text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_partition(partition_id);
$$;

CREATE FUNCTION queen.retry_dlq_message(partition_id bigint, transaction_id text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_partition(partition_id);
$$;

CREATE FUNCTION queen.delete_dlq_message(partition_id bigint, transaction_id text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_partition(partition_id);
$$;

CREATE FUNCTION queen.dlq_retry_message(partition_id bigint, transaction_id text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_partition(partition_id);
$$;

CREATE FUNCTION queen.dlq_replay(id bigint, options jsonb DEFAULT '{}') RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_dlq(id);
$$;

-- Who may call what: the shard's own grants, so a caller is refused by the
-- proxy what a shard would refuse. Calls run with the caller's rights and
-- reach the shards as the caller (PL/Proxy connects as current_user through
-- the user mappings of server queen), so each shard checks them again.
-- Every function pins its search_path.
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p
              WHERE p.pronamespace IN ('queen'::regnamespace, 'queen_remote'::regnamespace)
    LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s SET search_path = pg_catalog, pg_temp', f);
    END LOOP;
END
$$;

DO $$
BEGIN
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
    -- PL/Proxy 2.10's validator crashes the server when called by hand
    -- with a NULL catalog; only the server definitions need it.
    PERFORM 1 FROM pg_catalog.pg_proc WHERE proname = 'plproxy_fdw_validator';
    IF FOUND THEN
        EXECUTE (SELECT pg_catalog.format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', p.oid::regprocedure)
                   FROM pg_catalog.pg_proc p WHERE p.proname = 'plproxy_fdw_validator' LIMIT 1);
    END IF;
END
$$;
GRANT queen_app TO queen_admin;

REVOKE ALL ON SCHEMA queen, queen_remote FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA queen FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA queen, queen_remote FROM PUBLIC;
GRANT USAGE ON SCHEMA queen TO queen_app, pg_monitor;
GRANT USAGE ON SCHEMA queen_remote TO queen_app, pg_monitor;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA queen_remote TO queen_app, pg_monitor;
REVOKE EXECUTE ON FUNCTION queen_remote.shard_set FROM queen_app, pg_monitor;
-- The routing reads the slots and counts the shards as the caller; a
-- shard's connection string stays with the installer's roles.
GRANT SELECT ON queen.proxy_slots TO queen_app, pg_monitor;
GRANT SELECT (shard, added_at) ON queen.proxy_shards TO queen_app, pg_monitor;
GRANT EXECUTE ON FUNCTION
    queen.route_queue, queen.route_namespace, queen.route_partition, queen.route_dlq,
    queen.queue_slot
    TO queen_app, pg_monitor;

GRANT EXECUTE ON FUNCTION
    queen.push, queen.push_text, queen.push_binary, queen.pop, queen.pop_frames,
    queen.queue_version, queen.ack, queen.ack_text, queen.renew_lease, queen.push_fused,
    queen.ack_fused, queen.renew_fused, queen.transaction, queen.transaction_binary,
    queen.list_queues, queen.overview, queen.shards, queen.get_queue, queen.queue_counts,
    queen.retention_explain, queen.resource_queue, queen.queue_depth, queen.status_queue,
    queen.timer_schedule, queen.timer_cancel, queen.timer_peek, queen.timers_list,
    queen.ephemeral_pop, queen.ephemeral_depth, queen.kv_get, queen.kv_set, queen.kv_cas,
    queen.kv_delete, queen.kv_incr, queen.message_get, queen.traces_for_message,
    queen.get_dlq_message, queen.stream_register, queen.stream_state_get, queen.stream_cycle,
    queen.stream_queries
    TO queen_app;
GRANT EXECUTE ON FUNCTION
    queen.kv, queen.locks, queen.timers, queen.ephemeral_push, queen.ephemeral_ack,
    queen.kv_list, queen.trace_record, queen.fetch, queen.partitions_changed,
    queen.consumer_group_positions, queen.resource_queues, queen.resource_namespaces,
    queen.resource_tasks, queen.consumer_groups_list, queen.consumer_groups_summary,
    queen.consumer_groups_lagging, queen.consumer_group_detail, queen.kv_namespaces,
    queen.kv_usage, queen.maintenance_status, queen.table_sizes, queen.partition_backlog,
    queen.dlq_list, queen.dlq_messages, queen.ephemeral_queues, queen.metrics_summary,
    queen.system_overview, queen.sweeper_metrics, queen.stats_refresh, queen.retention_timeseries,
    queen.status, queen.status_queues, queen.status_analytics, queen.queue_lag, queen.queue_ops,
    queen.retention_series, queen.system_metrics_series, queen.worker_metrics_series,
    queen.messages_list, queen.trace_names, queen.traces_by_name, queen.consumer_group_get
    TO queen_app;
GRANT EXECUTE ON FUNCTION
    queen.consumer_group_delete, queen.consumer_group_drop, queen.system_switches,
    queen.timers_set_aside, queen.consumer_group_set_timestamp, queen.consumer_group_subscription
    TO queen_admin;
GRANT EXECUTE ON FUNCTION
    queen.resource_queues, queen.resource_namespaces, queen.resource_tasks,
    queen.consumer_groups_summary, queen.consumer_groups_lagging, queen.kv_usage,
    queen.maintenance_status, queen.table_sizes, queen.partition_backlog,
    queen.ephemeral_queues, queen.metrics_summary, queen.system_overview,
    queen.sweeper_metrics, queen.stats_refresh, queen.retention_timeseries,
    queen.status, queen.status_queues, queen.status_analytics, queen.queue_lag, queen.queue_ops,
    queen.retention_series, queen.system_metrics_series, queen.worker_metrics_series
    TO pg_monitor;
GRANT EXECUTE ON FUNCTION
    queen.configure, queen.delete_queue, queen.delete_queue_if_exists,
    queen.retry_failed_by_queue, queen.dlq_purge, queen.consumer_group_seek,
    queen.consumer_group_seek_queue, queen.consumer_group_seek_partition,
    queen.ephemeral_configure, queen.ephemeral_reset, queen.ephemeral_delete,
    queen.kv_quota, queen.message_delete, queen.retry_dlq_message,
    queen.delete_dlq_message, queen.dlq_retry_message, queen.dlq_replay, queen.stream_delete
    TO queen_admin;
GRANT EXECUTE ON FUNCTION
    queen.list_queues, queen.overview, queen.shards, queen.queue_counts,
    queen.retention_explain, queen.resource_queue, queen.queue_depth, queen.status_queue,
    queen.ephemeral_depth, queen.stream_queries
    TO pg_monitor;

-- A front-end's report of its own figures goes to shard 0 alone, so the
-- merged worker series counts it once.
CREATE FUNCTION queen.front_metrics_report(worker_id text, hostname text, figures jsonb) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON 0;
$$;
ALTER FUNCTION queen.front_metrics_report SET search_path = pg_catalog, pg_temp;
REVOKE EXECUTE ON FUNCTION queen.front_metrics_report FROM PUBLIC;
GRANT EXECUTE ON FUNCTION queen.front_metrics_report TO queen_admin;
