-- Many pushes' writes in one statement, as push_append_by_id.sql writes
-- one: for each partition $1[k] (each at most once, all held locked by
-- this transaction since an earlier statement), a segment of $2[k] frames
-- $3[k] after the partition's newest, and its hash sidecar row, whose
-- hashes are $8[$4[k]:$5[k]] and whose dedup hashes are $9[$6[k]:$7[k]]
-- (none when $6[k] > $7[k]).
WITH input AS (
    SELECT t.pid, t.frames, t.blob, t.h_from, t.h_to, t.d_from, t.d_to
      FROM unnest($1::int8[], $2::int4[], $3::bytea[], $4::int4[], $5::int4[], $6::int4[], $7::int4[])
           AS t(pid, frames, blob, h_from, h_to, d_from, d_to)
), p AS (
    SELECT p.id, p.queue_id, p.oldest_live_at IS NULL OR p.oldest_txn_at IS NULL AS unmarked,
           COALESCE(t.end_offset, p.log_start - 1) + 1 AS base,
           GREATEST(clock_timestamp(), p.last_write_at, t.created_at) AS ts,
           i.frames, i.blob, i.h_from, i.h_to, i.d_from, i.d_to
      FROM input i
      JOIN queen.log_partitions p ON p.id = i.pid
      LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                          WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
), seg AS (
    INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, frame_count, created_at, blob)
    SELECT id, base, base + frames - 1, frames, ts, blob FROM p
), side AS (
    INSERT INTO queen.log_txns (partition_id, base_offset, created_at, txn_hashes, dedup_hashes)
    SELECT id, base, ts, ($8::int8[])[h_from:h_to],
           CASE WHEN d_from <= d_to THEN ($9::int8[])[d_from:d_to] END
      FROM p
), mark AS (
    UPDATE queen.log_partitions m
       SET oldest_live_at = COALESCE(m.oldest_live_at, p.ts), oldest_txn_at = COALESCE(m.oldest_txn_at, p.ts)
      FROM p WHERE m.id = p.id AND p.unmarked
)
SELECT id AS id, base AS base, queue_id AS queue_id, frames AS frames FROM p
