-- queen_proxy 0.5.0 -> 0.6.0 (ALTER EXTENSION queen_proxy UPDATE).
--
-- The proxy's version follows the shards' (the workspace version). 0.6.0
-- keeps a shard's connection string from queen_app and pg_monitor: they
-- may read a shard's number and when it was added (the routing counts the
-- shards as the caller), not its dsn, and queen.shards() lists it only to
-- a role that may read it. This file is frozen once shipped.

REVOKE SELECT ON queen.proxy_shards FROM queen_app, pg_monitor;
GRANT SELECT (shard, added_at) ON queen.proxy_shards TO queen_app, pg_monitor;
