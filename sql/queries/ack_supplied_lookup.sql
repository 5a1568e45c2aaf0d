SELECT base_offset, txn_hashes FROM queen.log_txns
WHERE dedup_hashes && $2 AND dedup_hashes IS NOT NULL AND partition_id + 0 = $1
