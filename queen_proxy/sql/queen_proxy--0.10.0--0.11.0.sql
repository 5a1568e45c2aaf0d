-- queen_proxy 0.10.0 -> 0.11.0 (ALTER EXTENSION queen_proxy UPDATE).
--
-- The proxy's version follows the shards' (the workspace version). 0.11.0
-- routes streaming queries: a registration to its source queue's shard,
-- state reads and cycles to their source partition's shard (a cycle whose
-- sink queues live elsewhere is refused), the listing and the deletion to
-- every shard. This file is frozen once shipped.

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

CREATE  FUNCTION "stream_cycle"(
	"body" jsonb, /* Option < JsonbArg > */
	"producer" TEXT DEFAULT NULL /* Option < & str > */
) RETURNS json /* JsonOut */
VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'stream_cycle_wrapper';

CREATE  FUNCTION "stream_delete"(
	"name" TEXT /* Option < & str > */
) RETURNS json /* JsonOut */
VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'stream_delete_wrapper';

CREATE  FUNCTION "stream_queries"(
	"after" TEXT DEFAULT NULL, /* Option < & str > */
	"limit" INT DEFAULT 100 /* Option < i32 > */
) RETURNS json /* JsonOut */
VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'stream_queries_wrapper';

CREATE  FUNCTION "stream_register"(
	"body" jsonb /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'stream_register_wrapper';

CREATE  FUNCTION "stream_state_get"(
	"body" jsonb /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
VOLATILE
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'stream_state_get_wrapper';

ALTER FUNCTION queen_remote.stream_register(integer, jsonb) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION queen_remote.stream_state_get(integer, jsonb) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION queen_remote.stream_cycle(integer, text, jsonb, text) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION queen_remote.stream_queries_all(text, integer) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION queen_remote.stream_delete_all(text) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION queen.stream_register(jsonb) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION queen.stream_state_get(jsonb) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION queen.stream_cycle(jsonb, text) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION queen.stream_queries(text, integer) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION queen.stream_delete(text) SET search_path = pg_catalog, pg_temp;
REVOKE EXECUTE ON FUNCTION
    queen_remote.stream_register(integer, jsonb), queen_remote.stream_state_get(integer, jsonb),
    queen_remote.stream_cycle(integer, text, jsonb, text), queen_remote.stream_queries_all(text, integer),
    queen_remote.stream_delete_all(text),
    queen.stream_register(jsonb), queen.stream_state_get(jsonb), queen.stream_cycle(jsonb, text),
    queen.stream_queries(text, integer), queen.stream_delete(text)
    FROM PUBLIC;
GRANT EXECUTE ON FUNCTION
    queen_remote.stream_register(integer, jsonb), queen_remote.stream_state_get(integer, jsonb),
    queen_remote.stream_cycle(integer, text, jsonb, text), queen_remote.stream_queries_all(text, integer),
    queen_remote.stream_delete_all(text)
    TO queen_app, pg_monitor;
GRANT EXECUTE ON FUNCTION
    queen.stream_register(jsonb), queen.stream_state_get(jsonb), queen.stream_cycle(jsonb, text),
    queen.stream_queries(text, integer)
    TO queen_app;
GRANT EXECUTE ON FUNCTION queen.stream_queries(text, integer) TO pg_monitor;
GRANT EXECUTE ON FUNCTION queen.stream_delete(text) TO queen_admin;
