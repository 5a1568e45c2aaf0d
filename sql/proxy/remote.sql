-- queen_proxy: the calls the proxy's own functions (queen_proxy/src) make
-- on one shard (RUN ON the shard, their first argument) or on every shard
-- at once (RUN ON ALL, one row per shard). Each is the shard's function of
-- the same name, called as it is in the shard. A JSON answer comes back as
-- its text, which the caller reads and passes on as it is: declared json,
-- it would be parsed once more on its way through. The writes that may wait
-- on a row lock (pushes, acks) take the caller's lock_timeout (lock_wait),
-- set for the shard's statement alone: a shard runs each call in a
-- transaction of its own, so the bound a front-end sets for its call holds
-- on the shard too.

CREATE FUNCTION queen_remote.push_text(shard integer, lock_wait text, items text, producer text) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.push_text(items, producer) FROM pg_catalog.set_config('lock_timeout', lock_wait, true) AS w;
$$;

CREATE FUNCTION queen_remote.push_binary(shard integer, lock_wait text, body bytea, producer text) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.push_binary(body, producer) FROM pg_catalog.set_config('lock_timeout', lock_wait, true) AS w;
$$;

CREATE FUNCTION queen_remote.push_fused(shard integer, lock_wait text, bodies bytea[], is_binary boolean[], producers text[]) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.push_fused(bodies, is_binary, producers) FROM pg_catalog.set_config('lock_timeout', lock_wait, true) AS w;
$$;

CREATE FUNCTION queen_remote.ack_text(shard integer, lock_wait text, acks text) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.ack_text(acks) FROM pg_catalog.set_config('lock_timeout', lock_wait, true) AS w;
$$;

CREATE FUNCTION queen_remote.ack_fused(shard integer, lock_wait text, bodies text[]) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.ack_fused(bodies) FROM pg_catalog.set_config('lock_timeout', lock_wait, true) AS w;
$$;

CREATE FUNCTION queen_remote.pop(shard integer, queue text, partition text, consumer_group text, batch integer, options jsonb) RETURNS text
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

CREATE FUNCTION queen_remote.transaction(shard integer, ops jsonb, producer text) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.transaction(ops, producer);
$$;

CREATE FUNCTION queen_remote.transaction_binary(shard integer, body bytea, producer text) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.transaction_binary(body, producer);
$$;

CREATE FUNCTION queen_remote.shard_set(shard integer, n integer) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.shard_set(n);
$$;

CREATE FUNCTION queen_remote.renew_lease_all(lease_id text, seconds integer) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.renew_lease(lease_id, seconds);
$$;

CREATE FUNCTION queen_remote.renew_fused_all(lease_ids text[], seconds integer[]) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.renew_fused(lease_ids, seconds);
$$;

-- A renewal asked of one shard at a time (a lease id names no shard): a
-- shard that can not be reached fails only the leases it holds.
CREATE FUNCTION queen_remote.renew_lease(shard integer, lease_id text, seconds integer) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.renew_lease(lease_id, seconds);
$$;

CREATE FUNCTION queen_remote.renew_fused(shard integer, lease_ids text[], seconds integer[]) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.renew_fused(lease_ids, seconds);
$$;

CREATE FUNCTION queen_remote.queue_version_all(namespace text, task text) RETURNS SETOF bigint
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.queue_version(NULL, namespace, task);
$$;

CREATE FUNCTION queen_remote.queues_list_all(options jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.queues_list(options);
$$;

CREATE FUNCTION queen_remote.overview_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.overview();
$$;

CREATE FUNCTION queen_remote.kv_namespaces_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.kv_namespaces();
$$;

CREATE FUNCTION queen_remote.kv(shard integer, body jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.kv(body);
$$;

CREATE FUNCTION queen_remote.locks(shard integer, body jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.locks(body);
$$;

CREATE FUNCTION queen_remote.timers(shard integer, body jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.timers(body);
$$;

CREATE FUNCTION queen_remote.ephemeral_push(shard integer, body jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.ephemeral_push(body);
$$;

CREATE FUNCTION queen_remote.ephemeral_ack(shard integer, body jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.ephemeral_ack(body);
$$;

CREATE FUNCTION queen_remote.kv_list(shard integer, body jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.kv_list(body);
$$;

CREATE FUNCTION queen_remote.trace_record(shard integer, body jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.trace_record(body);
$$;

CREATE FUNCTION queen_remote.fetch(shard integer, body jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.fetch(body);
$$;

CREATE FUNCTION queen_remote.partitions_changed(shard integer, body jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.partitions_changed(body);
$$;

CREATE FUNCTION queen_remote.consumer_group_positions(shard integer, body jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.consumer_group_positions(body);
$$;

CREATE FUNCTION queen_remote.consumer_group_positions_all(body jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.consumer_group_positions(body);
$$;

CREATE FUNCTION queen_remote.resource_queues_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.resource_queues();
$$;

CREATE FUNCTION queen_remote.resource_namespaces_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.resource_namespaces();
$$;

CREATE FUNCTION queen_remote.resource_tasks_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.resource_tasks();
$$;

CREATE FUNCTION queen_remote.consumer_groups_list_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.consumer_groups_list();
$$;

CREATE FUNCTION queen_remote.consumer_groups_summary_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.consumer_groups_summary();
$$;

CREATE FUNCTION queen_remote.table_sizes_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.table_sizes();
$$;

CREATE FUNCTION queen_remote.ephemeral_queues_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.ephemeral_queues();
$$;

CREATE FUNCTION queen_remote.metrics_summary_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.metrics_summary();
$$;

CREATE FUNCTION queen_remote.system_overview_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.system_overview();
$$;

CREATE FUNCTION queen_remote.kv_usage_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.kv_usage(NULL);
$$;

CREATE FUNCTION queen_remote.kv_usage(shard integer, ns text) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.kv_usage(ns);
$$;

CREATE FUNCTION queen_remote.consumer_groups_lagging_all(min_lag_seconds bigint) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.consumer_groups_lagging(min_lag_seconds);
$$;

CREATE FUNCTION queen_remote.consumer_group_detail_all(consumer_group text) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.consumer_group_detail(consumer_group);
$$;

CREATE FUNCTION queen_remote.maintenance_status(shard integer) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.maintenance_status();
$$;

CREATE FUNCTION queen_remote.consumer_group_delete(shard integer, consumer_group text, queue text, delete_metadata boolean) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.consumer_group_delete(consumer_group, queue, delete_metadata);
$$;

CREATE FUNCTION queen_remote.consumer_group_delete_all(consumer_group text, queue text, delete_metadata boolean) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.consumer_group_delete(consumer_group, queue, delete_metadata);
$$;

CREATE FUNCTION queen_remote.consumer_group_drop(shard integer, consumer_group text, queue text, delete_metadata boolean) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.consumer_group_drop(consumer_group, queue, delete_metadata);
$$;

CREATE FUNCTION queen_remote.consumer_group_drop_all(consumer_group text, queue text, delete_metadata boolean) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.consumer_group_drop(consumer_group, queue, delete_metadata);
$$;

CREATE FUNCTION queen_remote.partition_backlog(shard integer, queue text, max_rows bigint) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.partition_backlog(queue, max_rows);
$$;

CREATE FUNCTION queen_remote.partition_backlog_all(queue text, max_rows bigint) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.partition_backlog(queue, max_rows);
$$;

CREATE FUNCTION queen_remote.dlq_list(shard integer, options jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.dlq_list(options);
$$;

CREATE FUNCTION queen_remote.dlq_list_all(options jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.dlq_list(options);
$$;

CREATE FUNCTION queen_remote.dlq_messages(shard integer, options jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.dlq_messages(options);
$$;

CREATE FUNCTION queen_remote.dlq_messages_all(options jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.dlq_messages(options);
$$;

CREATE FUNCTION queen_remote.system_switches(shard integer, surface text, changes jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.system_switches(surface, changes);
$$;

CREATE FUNCTION queen_remote.system_switches_all(surface text, changes jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.system_switches(surface, changes);
$$;

CREATE FUNCTION queen_remote.sweeper_metrics_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.sweeper_metrics();
$$;

CREATE FUNCTION queen_remote.stats_refresh_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.stats_refresh();
$$;

CREATE FUNCTION queen_remote.retention_timeseries_all(since timestamptz, bucket text) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.retention_timeseries(since, bucket);
$$;

CREATE FUNCTION queen_remote.timers_set_aside(shard integer, queue text, max_rows integer) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.timers_set_aside(queue, max_rows);
$$;

CREATE FUNCTION queen_remote.timers_set_aside_all(queue text, max_rows integer) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.timers_set_aside(queue, max_rows);
$$;

CREATE FUNCTION queen_remote.consumer_group_set_timestamp_all(consumer_group text, subscription_timestamp text) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.consumer_group_set_timestamp(consumer_group, subscription_timestamp);
$$;

CREATE FUNCTION queen_remote.status_queues(shard integer, params jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.status_queues(params);
$$;

CREATE FUNCTION queen_remote.status_analytics(shard integer, params jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.status_analytics(params);
$$;

CREATE FUNCTION queen_remote.queue_lag(shard integer, params jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.queue_lag(params);
$$;

CREATE FUNCTION queen_remote.queue_ops(shard integer, params jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.queue_ops(params);
$$;

CREATE FUNCTION queen_remote.retention_series(shard integer, params jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.retention_series(params);
$$;

CREATE FUNCTION queen_remote.messages_list(shard integer, params jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.messages_list(params);
$$;

CREATE FUNCTION queen_remote.status_queues_all(params jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.status_queues(params);
$$;

CREATE FUNCTION queen_remote.status_analytics_all(params jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.status_analytics(params);
$$;

CREATE FUNCTION queen_remote.queue_lag_all(params jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.queue_lag(params);
$$;

CREATE FUNCTION queen_remote.queue_ops_all(params jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.queue_ops(params);
$$;

CREATE FUNCTION queen_remote.retention_series_all(params jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.retention_series(params);
$$;

CREATE FUNCTION queen_remote.messages_list_all(params jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.messages_list(params);
$$;

CREATE FUNCTION queen_remote.system_metrics_series_all(params jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.system_metrics_series(params);
$$;

CREATE FUNCTION queen_remote.worker_metrics_series_all(params jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.worker_metrics_series(params);
$$;

CREATE FUNCTION queen_remote.status_all(params jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.status(params);
$$;

CREATE FUNCTION queen_remote.trace_names_all(row_limit integer, row_offset integer) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.trace_names(row_limit, row_offset);
$$;

CREATE FUNCTION queen_remote.traces_by_name_all(name text, row_limit integer, row_offset integer) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.traces_by_name(name, row_limit, row_offset);
$$;

CREATE FUNCTION queen_remote.consumer_group_get(shard integer, consumer_group text) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.consumer_group_get(consumer_group);
$$;

CREATE FUNCTION queen_remote.consumer_group_subscription(shard integer, consumer_group text, subscription_timestamp text) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.consumer_group_subscription(consumer_group, subscription_timestamp);
$$;

CREATE FUNCTION queen_remote.stream_register(shard integer, body jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.stream_register(body);
$$;

CREATE FUNCTION queen_remote.stream_state_get(shard integer, body jsonb) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.stream_state_get(body);
$$;

CREATE FUNCTION queen_remote.stream_cycle(shard integer, lock_wait text, body jsonb, producer text) RETURNS text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON shard;
    SELECT queen.stream_cycle(body, producer) FROM pg_catalog.set_config('lock_timeout', lock_wait, true) AS w;
$$;

CREATE FUNCTION queen_remote.stream_queries_all(after text, max_rows integer) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.stream_queries(after, max_rows);
$$;

CREATE FUNCTION queen_remote.stream_delete_all(name text) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.stream_delete(name);
$$;
