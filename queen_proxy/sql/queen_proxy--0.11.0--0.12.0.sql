-- queen_proxy 0.11.0 -> 0.12.0 (ALTER EXTENSION queen_proxy UPDATE).
--
-- The proxy's version follows the shards' (the workspace version). 0.12.0
-- takes who may call what from the shards' one list
-- (queen_datum/src/rights.rs), applied by queen_remote.grant_rights(), with
-- the group role queen_operator, and queen.rights() reads who may call what
-- as the proxy grants it. This file is frozen once shipped.

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

SELECT queen_remote.grant_rights();
GRANT USAGE ON SCHEMA queen TO queen_operator;
