SELECT consumer_group, committed + 1 AS next_offset FROM queen.log_consumers WHERE partition_id = $1
ORDER BY committed, consumer_group LIMIT 1
