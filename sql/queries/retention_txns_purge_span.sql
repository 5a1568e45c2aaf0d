SELECT count(*)::int8 AS rows, COALESCE(sum(cardinality(txn_hashes)), 0)::int8 AS messages,
       max(base_offset) AS max_base, max(base_offset + cardinality(txn_hashes)) AS new_start,
       bool_and(stale) AS all_stale
 FROM (SELECT base_offset, txn_hashes, created_at < $3 AS stale FROM queen.log_txns
        WHERE partition_id = $1 AND base_offset >= $2
        ORDER BY base_offset LIMIT $4) s
WHERE stale
