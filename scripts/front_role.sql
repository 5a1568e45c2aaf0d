-- The role queen_front logs in as: the message path and reads (queen_app)
-- and the changes its routes make on a user's behalf (queen_operator:
-- configure, delete a queue, retry or delete a dead letter, delete a
-- message, consumer-group admin, delete a streaming query). Nothing else:
-- no table, no maintenance step, no KV quota. Run as a superuser (or a role
-- with CREATEROLE that administers those roles) in the database that holds
-- the extension, or the sharding proxy's extension (queen_proxy); safe to
-- run again.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'queen_front') THEN
        CREATE ROLE queen_front LOGIN;
    END IF;
END
$$;
GRANT queen_app, queen_operator TO queen_front;
