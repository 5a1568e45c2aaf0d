-- queen_proxy 0.6.0 -> 0.7.0 (ALTER EXTENSION queen_proxy UPDATE).
--
-- The proxy's version follows the shards' (the workspace version). 0.7.0
-- asks a renewal of each shard on its own, so a shard that can not be
-- reached fails only the leases it holds. This file is frozen once shipped.

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

ALTER FUNCTION queen_remote.renew_lease(integer, text, integer) SET search_path = pg_catalog, pg_temp;
ALTER FUNCTION queen_remote.renew_fused(integer, text[], integer[]) SET search_path = pg_catalog, pg_temp;
REVOKE EXECUTE ON FUNCTION queen_remote.renew_lease(integer, text, integer),
                           queen_remote.renew_fused(integer, text[], integer[]) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION queen_remote.renew_lease(integer, text, integer),
                          queen_remote.renew_fused(integer, text[], integer[]) TO queen_app, pg_monitor;
