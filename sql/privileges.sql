-- queen: who may call what. Applied last by CREATE EXTENSION queen.
--
-- Tables are reached only through functions. Every function runs with the
-- owner's rights (SECURITY DEFINER) and a pinned search_path, so no object
-- of the caller's (a function or an operator in a schema they own) is ever
-- picked up inside one. The callers are NOLOGIN group roles, one per use
-- (queen_app, queen_operator, queen_admin, and PostgreSQL's pg_monitor);
-- which of them may call which function is the one list of
-- queen_datum/src/rights.rs, applied by queen_internal.grant_rights(),
-- which also makes the roles. Roles are cluster-wide: a second database
-- installing queen reuses them, and a role granted queen_app may use queen
-- in every database of the cluster that has it and lets it connect
-- (docs/security.md). Every update script ends by calling
-- queen_internal.grant_rights() again, so an updated database has the same
-- rights as a fresh install (docs/upgrades.md).

SELECT queen_internal.grant_rights();

REVOKE ALL ON SCHEMA queen, queen_internal FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA queen FROM PUBLIC;
REVOKE ALL ON ALL SEQUENCES IN SCHEMA queen FROM PUBLIC;
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA queen, queen_internal FROM PUBLIC;

-- Measured in bench/RESULTS.md: the pin costs a call a few microseconds.
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p
              WHERE p.pronamespace IN ('queen'::regnamespace, 'queen_internal'::regnamespace)
    LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s SECURITY DEFINER SET search_path = pg_catalog, pg_temp', f);
    END LOOP;
END
$$;

GRANT USAGE ON SCHEMA queen TO queen_app, queen_operator, pg_monitor;
GRANT USAGE ON SCHEMA queen_internal TO queen_admin;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA queen_internal TO queen_admin;
REVOKE EXECUTE ON FUNCTION queen_internal.grant_rights() FROM queen_admin;
