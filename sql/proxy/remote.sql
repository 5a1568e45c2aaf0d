-- queen_proxy: the calls the proxy's own functions (queen_proxy/src) make
-- on one shard (RUN ON the shard, their first argument) or on every shard
-- at once (RUN ON ALL, one row per shard). Each is the shard's function of
-- the same name, called as it is in the shard.

CREATE FUNCTION queen_remote.push_text(shard integer, items text, producer text) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.push_text(items, producer);
$$;

CREATE FUNCTION queen_remote.push_binary(shard integer, body bytea, producer text) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.push_binary(body, producer);
$$;

CREATE FUNCTION queen_remote.push_fused(shard integer, bodies bytea[], is_binary boolean[], producers text[]) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.push_fused(bodies, is_binary, producers);
$$;

CREATE FUNCTION queen_remote.ack_text(shard integer, acks text) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.ack_text(acks);
$$;

CREATE FUNCTION queen_remote.ack_fused(shard integer, bodies text[]) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.ack_fused(bodies);
$$;

CREATE FUNCTION queen_remote.pop(shard integer, queue text, partition text, consumer_group text, batch integer, options jsonb) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.pop(queue, partition, consumer_group, batch, options);
$$;

CREATE FUNCTION queen_remote.pop_frames(shard integer, queue text, partition text, consumer_group text, batch integer, options jsonb) RETURNS bytea
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.pop_frames(queue, partition, consumer_group, batch, options);
$$;

CREATE FUNCTION queen_remote.queue_version(shard integer, queue text, namespace text, task text) RETURNS bigint
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.queue_version(queue, namespace, task);
$$;

CREATE FUNCTION queen_remote.transaction(shard integer, ops jsonb, producer text) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.transaction(ops, producer);
$$;

CREATE FUNCTION queen_remote.transaction_binary(shard integer, body bytea, producer text) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.transaction_binary(body, producer);
$$;

CREATE FUNCTION queen_remote.shard_set(shard integer, n integer) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.shard_set(n);
$$;

CREATE FUNCTION queen_remote.renew_lease_all(lease_id text, seconds integer) RETURNS SETOF json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.renew_lease(lease_id, seconds);
$$;

CREATE FUNCTION queen_remote.renew_fused_all(lease_ids text[], seconds integer[]) RETURNS SETOF json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.renew_fused(lease_ids, seconds);
$$;

CREATE FUNCTION queen_remote.queue_version_all(namespace text, task text) RETURNS SETOF bigint
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.queue_version(NULL, namespace, task);
$$;

CREATE FUNCTION queen_remote.list_queues_all() RETURNS SETOF json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.list_queues();
$$;

CREATE FUNCTION queen_remote.overview_all() RETURNS SETOF json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.overview();
$$;

CREATE FUNCTION queen_remote.kv_namespaces_all() RETURNS SETOF json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.kv_namespaces();
$$;
