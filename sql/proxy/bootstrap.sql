-- queen_proxy: the bootstrap of CREATE EXTENSION queen_proxy, in the proxy
-- database. The proxy holds no queue data: only its shards and which shard
-- owns each slot of the routing hash (docs/scale.md).

-- The schema must be the installer's, as for queen itself.
DO $$
BEGIN
    IF (SELECT n.nspowner <> r.oid
          FROM pg_catalog.pg_namespace n, pg_catalog.pg_roles r
         WHERE n.nspname = 'queen' AND r.rolname = current_user) THEN
        RAISE EXCEPTION 'schema queen belongs to another role'
            USING ERRCODE = '42501',
                  HINT = 'queen_proxy is installed into a schema owned by the role that runs CREATE EXTENSION';
    END IF;
END
$$;

-- The calls the proxy's own functions make on one shard (the shard is
-- their first argument), apart from the API.
CREATE SCHEMA queen_remote;

-- The shards, numbered from 0 in the order they were added; shard n is
-- partition pn of the PL/Proxy cluster `queen` and draws its partition
-- and dead-letter ids from its own range (queen.shard_set on the shard).
CREATE TABLE queen.proxy_shards (
    shard    integer PRIMARY KEY CHECK (shard >= 0),
    dsn      text NOT NULL,
    added_at timestamptz NOT NULL DEFAULT now()
);

-- Which shard owns each slot of the routing hash. A queue (or a KV
-- namespace) hashes to a slot; a slot is moved to another shard only while
-- nothing of it is stored anywhere (queen.shard_add).
CREATE TABLE queen.proxy_slots (
    slot  integer PRIMARY KEY CHECK (slot >= 0),
    shard integer NOT NULL REFERENCES queen.proxy_shards (shard)
);

-- A logical backup (pg_dump) of the proxy database carries its shards and
-- slots: unmarked, an extension's tables are restored empty.
SELECT pg_catalog.pg_extension_config_dump('queen.proxy_shards', '');
SELECT pg_catalog.pg_extension_config_dump('queen.proxy_slots', '');
