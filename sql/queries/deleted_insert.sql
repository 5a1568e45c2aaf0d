-- Tombstones for offsets of one message; answers the offsets newly deleted.
INSERT INTO queen.log_deleted (partition_id, message_offset, transaction_id)
SELECT $1, u.o, $3 FROM unnest($2::int8[]) AS u(o)
    ON CONFLICT (partition_id, message_offset) DO NOTHING
RETURNING message_offset
