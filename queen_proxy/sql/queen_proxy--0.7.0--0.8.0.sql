-- queen_proxy 0.7.0 -> 0.8.0 (ALTER EXTENSION queen_proxy UPDATE).
--
-- The proxy's version follows the shards' (the workspace version). 0.8.0
-- passes the caller's lock_timeout to the shard with every push and ack
-- (lock_wait): a push stuck on a row lock on a shard now fails at the bound
-- its caller set, as it does on one database, instead of waiting while the
-- front-end's other requests wait behind it. The five calls are made again
-- with that argument. This file is frozen once shipped.

DROP FUNCTION queen_remote.push_text(integer, text, text);
DROP FUNCTION queen_remote.push_binary(integer, bytea, text);
DROP FUNCTION queen_remote.push_fused(integer, bytea[], boolean[], text[]);
DROP FUNCTION queen_remote.ack_text(integer, text);
DROP FUNCTION queen_remote.ack_fused(integer, text[]);

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

ALTER FUNCTION queen_remote.push_text(integer, text, text, text) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION queen_remote.push_binary(integer, text, bytea, text) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION queen_remote.push_fused(integer, text, bytea[], boolean[], text[]) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION queen_remote.ack_text(integer, text, text) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION queen_remote.ack_fused(integer, text, text[]) SET search_path = pg_catalog, pg_temp;
REVOKE EXECUTE ON FUNCTION queen_remote.push_text(integer, text, text, text),
                           queen_remote.push_binary(integer, text, bytea, text),
                           queen_remote.push_fused(integer, text, bytea[], boolean[], text[]),
                           queen_remote.ack_text(integer, text, text),
                           queen_remote.ack_fused(integer, text, text[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION queen_remote.push_text(integer, text, text, text),
                          queen_remote.push_binary(integer, text, bytea, text),
                          queen_remote.push_fused(integer, text, bytea[], boolean[], text[]),
                          queen_remote.ack_text(integer, text, text),
                          queen_remote.ack_fused(integer, text, text[]) TO queen_app, pg_monitor;
