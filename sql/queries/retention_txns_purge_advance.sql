UPDATE queen.log_partitions
  SET txns_start = GREATEST(txns_start, $2),
      oldest_txn_at = (SELECT created_at FROM queen.log_txns
                        WHERE partition_id = $1 AND base_offset >= GREATEST(txns_start, $2)
                        ORDER BY base_offset LIMIT 1)
WHERE id = $1
