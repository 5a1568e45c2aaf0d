-- The deleted offsets of a partition within from..=to, in order.
SELECT message_offset FROM queen.log_deleted
 WHERE partition_id = $1 AND message_offset >= $2 AND message_offset <= $3
 ORDER BY message_offset
