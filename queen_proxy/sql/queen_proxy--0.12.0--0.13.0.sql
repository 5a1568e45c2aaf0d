-- queen_proxy 0.12.0 -> 0.13.0 (ALTER EXTENSION queen_proxy UPDATE).
--
-- The proxy's version follows the shards' (the workspace version). 0.13.0
-- routes dlq_retry_queue, the new name of retry_failed_by_queue; queues_list
-- takes options (filters, order and a page) and merges every shard's page
-- (queen_remote.queues_list_all in place of list_queues_all); the
-- proxy's consumer_groups_list also answers queueMode, and its overview
-- merges the shards' overviews as system_overview did (both in the proxy's
-- library). The deprecated names stay until 0.14.0. This file is frozen
-- once shipped.

CREATE FUNCTION queen.dlq_retry_queue(queue text, consumer_group text DEFAULT NULL, max_rows integer DEFAULT 100) RETURNS json
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON queen.route_queue(queue);
$$;
ALTER FUNCTION queen.dlq_retry_queue(text, text, integer) SET search_path = pg_catalog, pg_temp;
REVOKE EXECUTE ON FUNCTION queen.dlq_retry_queue(text, text, integer) FROM PUBLIC;

DROP FUNCTION queen.queues_list();
CREATE FUNCTION "queues_list"(
	"options" jsonb DEFAULT '{}' /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'queues_list_with_options_wrapper';
ALTER FUNCTION queen.queues_list(jsonb) SET search_path = pg_catalog, pg_temp;
REVOKE EXECUTE ON FUNCTION queen.queues_list(jsonb) FROM PUBLIC;

DROP FUNCTION queen_remote.list_queues_all();
CREATE FUNCTION queen_remote.queues_list_all(options jsonb) RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.queues_list(options);
$$;
ALTER FUNCTION queen_remote.queues_list_all(jsonb) SET search_path = pg_catalog, pg_temp;
REVOKE EXECUTE ON FUNCTION queen_remote.queues_list_all(jsonb) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION queen_remote.queues_list_all(jsonb) TO queen_app, pg_monitor;

SELECT queen_remote.grant_rights();
