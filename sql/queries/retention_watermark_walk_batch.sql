WITH batch AS (
    SELECT id, log_start, txns_start, oldest_live_at, oldest_txn_at
      FROM queen.log_partitions WHERE id > $1 ORDER BY id LIMIT $2
), truth AS (
    SELECT b.id, b.oldest_live_at AS old_live, b.oldest_txn_at AS old_txn,
           (SELECT s.created_at FROM queen.log_segments s
             WHERE s.partition_id = b.id AND s.base_offset >= b.log_start
             ORDER BY s.base_offset LIMIT 1) AS live,
           (SELECT t.created_at FROM queen.log_txns t
             WHERE t.partition_id = b.id AND t.base_offset >= b.txns_start
             ORDER BY t.base_offset LIMIT 1) AS txn
      FROM batch b
), fixed AS (
    UPDATE queen.log_partitions p SET oldest_live_at = t.live, oldest_txn_at = t.txn
      FROM truth t
     WHERE p.id = t.id AND (t.old_live IS DISTINCT FROM t.live OR t.old_txn IS DISTINCT FROM t.txn)
    RETURNING 1
)
SELECT (SELECT max(id) FROM batch) AS last_id, (SELECT count(*)::int8 FROM fixed) AS fixed,
       (SELECT count(*)::int8 FROM batch) AS scanned
