-- Many pushes' writes in one statement, as push_append_by_id.sql writes
-- one: for each locked partition $1[k] (each at most once), bump its offsets
-- by $2[k] frames, insert the segment $3[k] and its hash sidecar row, whose
-- hashes are $8[$4[k]:$5[k]] and whose dedup hashes are $9[$6[k]:$7[k]]
-- (none when $6[k] > $7[k]).
WITH input AS (
    SELECT t.pid, t.frames, t.blob, t.h_from, t.h_to, t.d_from, t.d_to
      FROM unnest($1::int8[], $2::int4[], $3::bytea[], $4::int4[], $5::int4[], $6::int4[], $7::int4[])
           AS t(pid, frames, blob, h_from, h_to, d_from, d_to)
), bump AS (
    UPDATE queen.log_partitions p
       SET last_offset = p.last_offset + i.frames,
           last_write_at = GREATEST(c.now, p.last_write_at),
           oldest_live_at = COALESCE(p.oldest_live_at, GREATEST(c.now, p.last_write_at)),
           oldest_txn_at = COALESCE(p.oldest_txn_at, GREATEST(c.now, p.last_write_at))
      FROM input i, (SELECT clock_timestamp() AS now) c
     WHERE p.id = i.pid
 RETURNING p.id, p.queue_id, p.last_offset - i.frames + 1 AS base, p.last_offset AS end_offset,
           p.last_write_at AS ts, i.frames, i.blob, i.h_from, i.h_to, i.d_from, i.d_to
), seg AS (
    INSERT INTO queen.log_segments (partition_id, base_offset, end_offset, frame_count, created_at, blob)
    SELECT id, base, end_offset, frames, ts, blob FROM bump
), side AS (
    INSERT INTO queen.log_txns (partition_id, base_offset, created_at, txn_hashes, dedup_hashes)
    SELECT id, base, ts, ($8::int8[])[h_from:h_to],
           CASE WHEN d_from <= d_to THEN ($9::int8[])[d_from:d_to] END
      FROM bump
)
SELECT id AS id, base AS base, queue_id AS queue_id, frames AS frames FROM bump
