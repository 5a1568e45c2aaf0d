-- queen 0.12.0 -> 0.13.0 (ALTER EXTENSION queen UPDATE).
--
-- 0.13.0 gives the remaining operations one name each, answering one
-- shape: consumer_groups_list (with each queue's state, lag and
-- subscription, and the pops without a group under queueMode) in place of
-- consumer_groups_summary, consumer_group_get in place of
-- consumer_group_detail, consumer_group_seek (whose option rules and answer
-- are now the seek every route uses) in place of consumer_group_seek_queue,
-- overview (queen's totals with the counts, lag and throughput) in place of
-- system_overview, queue_get in place of resource_queue and status_queue,
-- queues_list (now with options: filters, order and a page) in place of
-- resource_queues and status_queues, dlq_retry_message in place of retry_dlq_message, and
-- dlq_retry_queue, the new name of retry_failed_by_queue. The old names
-- stay until 0.14.0, as do those deprecated in 0.12.0; grant_rights()
-- describes them so. This file is frozen once shipped.

CREATE FUNCTION "dlq_retry_queue"(
	"queue" TEXT, /* & str */
	"consumer_group" TEXT DEFAULT NULL, /* Option < & str > */
	"max_rows" INT DEFAULT 100 /* i32 */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'dlq_retry_queue_wrapper';
ALTER FUNCTION queen.dlq_retry_queue(text, text, integer) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE EXECUTE ON FUNCTION queen.dlq_retry_queue(text, text, integer) FROM PUBLIC;

-- queues_list takes options: the function without arguments is replaced.
DROP FUNCTION queen.queues_list();
CREATE FUNCTION "queues_list"(
	"options" jsonb DEFAULT '{}' /* Option < JsonbArg > */
) RETURNS json /* JsonOut */
LANGUAGE c /* Rust */
AS 'MODULE_PATHNAME', 'queues_list_with_options_wrapper';
ALTER FUNCTION queen.queues_list(jsonb) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
REVOKE EXECUTE ON FUNCTION queen.queues_list(jsonb) FROM PUBLIC;

SELECT queen_internal.grant_rights();
