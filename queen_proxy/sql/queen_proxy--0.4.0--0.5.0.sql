-- queen_proxy 0.4.0 -> 0.5.0 (ALTER EXTENSION queen_proxy UPDATE).
--
-- 0.5.0 marks the shard and slot tables with pg_extension_config_dump, so
-- that pg_dump of the proxy database writes their rows and a restore
-- brings the routing back (docs/durability.md). Functions and rights are
-- as in 0.4.0. This file is frozen once shipped.

SELECT pg_catalog.pg_extension_config_dump('queen.proxy_shards', '');
SELECT pg_catalog.pg_extension_config_dump('queen.proxy_slots', '');
