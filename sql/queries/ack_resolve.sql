SELECT base_offset, txn_hashes FROM queen.log_txns
WHERE partition_id = $1 AND base_offset <= $2
ORDER BY base_offset DESC LIMIT $3
