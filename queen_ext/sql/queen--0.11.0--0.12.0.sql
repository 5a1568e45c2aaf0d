-- queen 0.11.0 -> 0.12.0 (ALTER EXTENSION queen UPDATE).
--
-- 0.12.0 writes who may call what once: the group role queen_operator (the
-- changes an operator or the HTTP front-end makes, granted to queen_admin)
-- and the list of every function's roles (queen_datum/src/rights.rs),
-- applied by queen_internal.grant_rights(), and queen.rights(), which reads
-- them as granted. From this version on an update
-- script ends by calling it, instead of repeating the privileges. This file
-- is frozen once shipped.

CREATE FUNCTION queen_internal."grant_rights"() RETURNS void
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'grant_rights_wrapper';
ALTER FUNCTION queen_internal.grant_rights() SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE EXECUTE ON FUNCTION queen_internal.grant_rights() FROM PUBLIC;

CREATE FUNCTION "rights"() RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'rights_wrapper';

SELECT queen_internal.grant_rights();
GRANT USAGE ON SCHEMA queen TO queen_operator;
