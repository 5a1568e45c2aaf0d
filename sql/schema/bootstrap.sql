-- queen: the bootstrap of CREATE EXTENSION queen: the schema must be the
-- installer's, and the maintenance functions get a schema of their own.

-- The schema must be the installer's: objects another role placed in it
-- would run inside every call with the owner's rights.
DO $$
BEGIN
    IF (SELECT n.nspowner <> r.oid
          FROM pg_catalog.pg_namespace n, pg_catalog.pg_roles r
         WHERE n.nspname = 'queen' AND r.rolname = current_user) THEN
        RAISE EXCEPTION 'schema queen belongs to another role'
            USING ERRCODE = '42501',
                  HINT = 'queen is installed into a schema owned by the role that runs CREATE EXTENSION; drop or rename the existing schema first';
    END IF;
END
$$;

-- The maintenance steps, cycles and policy-free SQL helpers, apart from the
-- public API: only queen_admin may run them by hand (sql/privileges.sql).
CREATE SCHEMA queen_internal;
