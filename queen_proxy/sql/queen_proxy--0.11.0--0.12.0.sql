-- queen_proxy 0.11.0 -> 0.12.0 (ALTER EXTENSION queen_proxy UPDATE).
--
-- The proxy's version follows the shards' (the workspace version). 0.12.0
-- takes who may call what from the shards' one list
-- (queen_datum/src/rights.rs), applied by queen_remote.grant_rights(), with
-- the group role queen_operator, and queen.rights() reads who may call what
-- as the proxy grants it. queue_get, queue_delete, queues_list,
-- dlq_message_get and dlq_message_delete are the new names of get_queue,
-- delete_queue, list_queues, get_dlq_message and delete_dlq_message. This
-- file is frozen once shipped.

CREATE FUNCTION queen_remote."grant_rights"() RETURNS void
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'grant_rights_wrapper';
ALTER FUNCTION queen_remote.grant_rights() SET search_path = pg_catalog, pg_temp;
REVOKE EXECUTE ON FUNCTION queen_remote.grant_rights() FROM PUBLIC;

CREATE FUNCTION "rights"() RETURNS json /* queen_datum::JsonOut */
STRICT VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'rights_wrapper';

-- One name per operation, its noun first: the old names stay for one
-- version (described as deprecated by grant_rights()).
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

CREATE FUNCTION "queues_list"() RETURNS json /* queen_datum::JsonOut */
STRICT VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'queues_list_wrapper';

CREATE OR REPLACE FUNCTION queen_remote.list_queues_all() RETURNS SETOF text
LANGUAGE plproxy AS $$
    CLUSTER 'queen';
    RUN ON ALL;
    SELECT queen.queues_list();
$$;
ALTER FUNCTION queen_remote.list_queues_all() SET search_path = pg_catalog, pg_temp;

-- Every function pins its search_path, and PUBLIC may execute none of
-- them, as sql/proxy/routed.sql makes every function of a fresh install.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA queen FROM PUBLIC;
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p
              WHERE p.pronamespace = 'queen'::regnamespace
                AND p.proname IN ('rights', 'queues_list', 'queue_get', 'queue_delete',
                                  'dlq_message_get', 'dlq_message_delete')
    LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s SET search_path = pg_catalog, pg_temp', f);
    END LOOP;
END
$$;

SELECT queen_remote.grant_rights();
GRANT USAGE ON SCHEMA queen TO queen_operator;
