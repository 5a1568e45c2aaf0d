-- Whether the message at one offset of a partition is deleted (tombstoned).
SELECT true AS deleted FROM queen.log_deleted WHERE partition_id = $1 AND message_offset = $2
