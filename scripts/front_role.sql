-- The role queen_front logs in as: the message path and reads (queen_app),
-- plus the admin calls its routes make (configure, delete a queue, retry or
-- delete a dead letter, delete a message, consumer-group admin). Nothing
-- else: no table, no maintenance step, no KV quota. Run as a superuser (or
-- the extension's owner) in the database that holds the extension; safe to
-- run again.
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'queen_front') THEN
        CREATE ROLE queen_front LOGIN;
    END IF;
END
$$;
GRANT queen_app TO queen_front;
GRANT EXECUTE ON FUNCTION
    queen.configure, queen.delete_queue,
    queen.retry_dlq_message, queen.delete_dlq_message,
    queen.consumer_group_delete, queen.consumer_group_seek, queen.consumer_group_subscription,
    queen.delete_queue_if_exists,
    queen.consumer_group_drop, queen.consumer_group_set_timestamp,
    queen.consumer_group_seek_queue, queen.consumer_group_seek_partition,
    queen.dlq_replay, queen.dlq_retry_message, queen.dlq_purge,
    queen.system_switches
    TO queen_front;
GRANT EXECUTE ON FUNCTION queen.message_delete TO queen_front;
GRANT EXECUTE ON FUNCTION
    queen.ephemeral_configure, queen.ephemeral_reset, queen.ephemeral_delete
    TO queen_front;
GRANT EXECUTE ON FUNCTION queen.front_metrics_report TO queen_front;
