-- A push into one partition in one statement: partition $7 of queue $6 of
-- tenant $5 (when it exists and, with $8, its queue keeps no dedup window)
-- locked, its segment and sidecar row written as push_append_by_id.sql
-- writes them. When the lock had to wait for another push, this
-- statement's snapshot predates that push's segment: the segment insert
-- then meets it on the primary key and writes nothing (ON CONFLICT DO
-- NOTHING), and the row comes back with a NULL base; the caller writes
-- again in a statement of its own, whose snapshot sees it.
WITH p0 AS (
    SELECT p.id, p.queue_id, p.log_start, p.last_write_at,
           p.oldest_live_at IS NULL OR p.oldest_txn_at IS NULL AS unmarked,
           q.dedup_window_seconds > 0 AS keep_ids
      FROM queen.queues q
      JOIN queen.log_partitions p ON p.queue_id = q.id AND p.name = $7
     WHERE q.tenant_id = $5 AND q.name = $6 AND (NOT $8 OR q.dedup_window_seconds = 0)
       FOR NO KEY UPDATE OF p
), p AS (
    SELECT p0.id, p0.queue_id, p0.unmarked, p0.keep_ids,
           COALESCE(t.end_offset, p0.log_start - 1) + 1 AS base,
           GREATEST(clock_timestamp(), p0.last_write_at, t.created_at) AS ts
      FROM p0
      LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                          WHERE s.partition_id = p0.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
), seg AS (
    INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, frame_count, created_at, blob)
    SELECT id, base, base + $1 - 1, $1, ts, $2 FROM p
    ON CONFLICT (partition_id, base_offset) DO NOTHING
    RETURNING partition_id, base_offset, created_at
), side AS (
    INSERT INTO queen.log_txns (partition_id, base_offset, created_at, txn_hashes, dedup_hashes)
    SELECT s.partition_id, s.base_offset, s.created_at, $3, CASE WHEN p.keep_ids THEN $4 END
      FROM seg s, p
), mark AS (
    UPDATE queen.log_partitions m
       SET oldest_live_at = COALESCE(m.oldest_live_at, s.created_at),
           oldest_txn_at = COALESCE(m.oldest_txn_at, s.created_at)
      FROM seg s, p WHERE m.id = s.partition_id AND p.unmarked
)
SELECT p.id, s.base_offset AS base, p.queue_id FROM p LEFT JOIN seg s ON true
