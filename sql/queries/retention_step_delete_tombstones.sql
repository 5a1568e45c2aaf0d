-- The tombstones of a partition at or below the end of the segments a
-- retention step deleted (older ones too: a tombstone is never kept without
-- its segment).
DELETE FROM queen.log_deleted WHERE partition_id = $1 AND message_offset <= $2
