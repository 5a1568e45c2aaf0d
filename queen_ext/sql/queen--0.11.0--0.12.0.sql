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

-- One name per operation, its noun first: the old names stay for one
-- version as deprecated functions (described so by grant_rights()).
CREATE FUNCTION "queues_list"() RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'queues_list_wrapper';

CREATE FUNCTION "queue_get"(
	"queue" TEXT /* & str */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'queue_get_wrapper';

CREATE FUNCTION "queue_delete"(
	"queue" TEXT /* Option < & str > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'queue_delete_wrapper';

CREATE FUNCTION "dlq_message_get"(
	"partition_id" bigint, /* i64 */
	"transaction_id" TEXT /* & str */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'dlq_message_get_wrapper';

CREATE FUNCTION "dlq_message_delete"(
	"partition_id" bigint, /* i64 */
	"transaction_id" TEXT /* & str */
) RETURNS json /* JsonOut */
STRICT
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'dlq_message_delete_wrapper';

-- The functions above run with the owner's rights and a pinned
-- search_path, and PUBLIC may execute none of them, as sql/privileges.sql
-- makes every function of a fresh install.
REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA queen FROM PUBLIC;
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p
              WHERE p.pronamespace = 'queen'::regnamespace
                AND p.proname IN ('rights', 'queues_list', 'queue_get', 'queue_delete',
                                  'dlq_message_get', 'dlq_message_delete')
    LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s SECURITY DEFINER SET search_path = pg_catalog, pg_temp', f);
    END LOOP;
END
$$;

SELECT queen_internal.grant_rights();
GRANT USAGE ON SCHEMA queen TO queen_operator;
