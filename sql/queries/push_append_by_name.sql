-- One push's write (the same in push_append_by_id.sql and
-- push_append_by_name.sql, which differ only in how the UPDATE finds its
-- partition row): bump the partition's offsets, insert the segment and its
-- hash sidecar row.
WITH bump AS (
    UPDATE queen.log_partitions p
       SET last_offset = p.last_offset + $1,
           last_write_at = GREATEST(c.now, p.last_write_at),
           oldest_live_at = COALESCE(p.oldest_live_at, GREATEST(c.now, p.last_write_at)),
           oldest_txn_at = COALESCE(p.oldest_txn_at, GREATEST(c.now, p.last_write_at))
      FROM (SELECT clock_timestamp() AS now) c, queen.queues q
     WHERE q.tenant_id = $5 AND q.name = $6 AND p.queue_id = q.id AND p.name = $7
       AND (NOT $8 OR q.dedup_window_seconds = 0)
 RETURNING q.dedup_window_seconds > 0 AS keep_ids, p.id, p.queue_id, p.last_offset - $1 + 1 AS base, p.last_offset AS end_offset, p.last_write_at AS ts
), seg AS (
    INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, frame_count, created_at, blob)
    SELECT id, base, end_offset, $1, ts, $2 FROM bump
), side AS (
    INSERT INTO queen.log_txns (partition_id, base_offset, created_at, txn_hashes, dedup_hashes)
    SELECT id, base, ts, $3, CASE WHEN keep_ids THEN $4 END FROM bump
)
SELECT id, base, queue_id FROM bump
