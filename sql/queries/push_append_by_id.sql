-- One push's write into partition $5, which this transaction holds locked
-- (FOR NO KEY UPDATE, taken by an earlier statement, so this statement's
-- snapshot sees every push that committed before the lock): the segment
-- lands after the partition's newest one (or at log_start when retention
-- deleted them all), with its hash sidecar row. The partition row is not
-- updated, except once to set the live watermarks a partition with no
-- live segment lacks (push_append_by_name.sql and push_append_many.sql
-- write the same way).
WITH p AS (
    SELECT p.id, p.queue_id, p.oldest_live_at IS NULL OR p.oldest_txn_at IS NULL AS unmarked,
           COALESCE(t.end_offset, p.log_start - 1) + 1 AS base,
           GREATEST(clock_timestamp(), p.last_write_at, t.created_at) AS ts
      FROM queen.log_partitions p
      LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                          WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
     WHERE p.id = $5
), seg AS (
    INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, frame_count, created_at, blob)
    SELECT id, base, base + $1 - 1, $1, ts, $2 FROM p
), side AS (
    INSERT INTO queen.log_txns (partition_id, base_offset, created_at, txn_hashes, dedup_hashes)
    SELECT id, base, ts, $3, $4 FROM p
), mark AS (
    UPDATE queen.log_partitions m
       SET oldest_live_at = COALESCE(m.oldest_live_at, p.ts), oldest_txn_at = COALESCE(m.oldest_txn_at, p.ts)
      FROM p WHERE m.id = p.id AND p.unmarked
)
SELECT id, base, queue_id FROM p
