-- The sidecar rows, among a partition's newest ones (at most a limit), that
-- hold a transaction id's hash.
SELECT s.base_offset, s.txn_hashes
  FROM (SELECT base_offset, txn_hashes FROM queen.log_txns
         WHERE partition_id = $1 ORDER BY base_offset DESC LIMIT $3) s
 WHERE $2 = ANY (s.txn_hashes)
 ORDER BY s.base_offset
