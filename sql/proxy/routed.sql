-- queen_proxy: the calls routed by one argument, as PL/Proxy functions with
-- the shard's own signatures: by queue (queen.route_queue), by KV namespace
-- (queen.route_namespace), by partition or dead-letter id (the shard is in
-- the id's high bits). The shard's function of the same name answers.

CREATE FUNCTION queen.configure(queue text, options jsonb DEFAULT '{}', mode text DEFAULT 'merge') RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.queue_get(queue text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.queue_delete(queue text) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;

CREATE FUNCTION queen.dlq_message_get(partition_id bigint, transaction_id text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_partition(partition_id);
$$;

CREATE FUNCTION queen.dlq_message_delete(partition_id bigint, transaction_id text) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_partition(partition_id);
$$;

-- The deprecated names of the four above (removed in 0.14.0).
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

-- Deprecated (0.13.0; removed in 0.14.0): queue_get, whose answer the
-- front-end turns into Queen's; as is status_queue below.
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

CREATE FUNCTION queen.dlq_retry_queue(queue text, consumer_group text DEFAULT NULL, max_rows integer DEFAULT 100) RETURNS json
LANGUAGE plproxy AS $$
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

-- A front-end's report of its own figures goes to shard 0 alone, so the
-- merged worker series counts it once.
CREATE FUNCTION queen.front_metrics_report(worker_id text, hostname text, figures jsonb) RETURNS json
STRICT LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON 0;
$$;

-- Who may call what: the shard's own list (queen_datum/src/rights.rs,
-- applied by queen_remote.grant_rights(), which also makes the roles), so a
-- caller is refused by the proxy what a shard would refuse. Calls run with
-- the caller's rights and reach the shards as the caller (PL/Proxy connects
-- as current_user through the user mappings of server queen), so each shard
-- checks them again. Every function pins its search_path.
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p
              WHERE p.pronamespace IN ('queen'::regnamespace, 'queen_remote'::regnamespace)
    LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s SET search_path = pg_catalog, pg_temp', f);
    END LOOP;
    -- PL/Proxy 2.10's validator crashes the server when called by hand
    -- with a NULL catalog; only the server definitions need it.
    PERFORM 1 FROM pg_catalog.pg_proc WHERE proname = 'plproxy_fdw_validator';
    IF FOUND THEN
        EXECUTE (SELECT pg_catalog.format('REVOKE EXECUTE ON FUNCTION %s FROM PUBLIC', p.oid::regprocedure)
                   FROM pg_catalog.pg_proc p WHERE p.proname = 'plproxy_fdw_validator' LIMIT 1);
    END IF;
END
$$;

SELECT queen_remote.grant_rights();

REVOKE ALL ON SCHEMA queen, queen_remote FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA queen FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA queen, queen_remote FROM PUBLIC;
GRANT USAGE ON SCHEMA queen TO queen_app, queen_operator, pg_monitor;
GRANT USAGE ON SCHEMA queen_remote TO queen_app, pg_monitor;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA queen_remote TO queen_app, pg_monitor;
REVOKE EXECUTE ON FUNCTION queen_remote.shard_set, queen_remote.grant_rights FROM queen_app, pg_monitor;
-- The routing reads the slots and counts the shards as the caller; a
-- shard's connection string stays with the installer's roles.
GRANT SELECT ON queen.proxy_slots TO queen_app, pg_monitor;
GRANT SELECT (shard, added_at) ON queen.proxy_shards TO queen_app, pg_monitor;
