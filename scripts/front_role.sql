-- The role queen_front logs in as: the message path and reads (queen_app),
-- plus the admin calls its routes make (configure, delete a queue, retry or
-- delete a dead letter, delete a message, consumer-group admin, delete a
-- streaming query). Nothing
-- else: no table, no maintenance step, no KV quota. Run as a superuser (or
-- the extension's owner) in the database that holds the extension, or the
-- sharding proxy's extension (queen_proxy); safe to run again. A call the
-- database does not have is skipped.
DO $$
DECLARE
    f regprocedure;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'queen_front') THEN
        CREATE ROLE queen_front LOGIN;
    END IF;
    GRANT queen_app TO queen_front;
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p
              WHERE p.pronamespace = 'queen'::regnamespace
                AND p.proname = ANY (ARRAY[
                    'configure', 'delete_queue', 'delete_queue_if_exists',
                    'retry_dlq_message', 'delete_dlq_message',
                    'consumer_group_delete', 'consumer_group_seek', 'consumer_group_subscription',
                    'consumer_group_drop', 'consumer_group_set_timestamp',
                    'consumer_group_seek_queue', 'consumer_group_seek_partition',
                    'dlq_replay', 'dlq_retry_message', 'dlq_purge',
                    'system_switches', 'message_delete',
                    'ephemeral_configure', 'ephemeral_reset', 'ephemeral_delete',
                    'stream_delete', 'front_metrics_report'])
    LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO queen_front', f);
    END LOOP;
END
$$;
