-- Removes a partition's oldest messages, among its first $3: those within
-- the first $4, and those before which fewer than $5 bytes were removed.
-- None lies below the tail $6: the scan starts there.
WITH first AS (
    SELECT seq, row_number() OVER w AS rn, sum(bytes) OVER w - bytes AS before
      FROM queen.ephemeral_messages
     WHERE incarnation = $1 AND partition = $2 AND seq >= $6
    WINDOW w AS (ORDER BY seq)
     ORDER BY seq
     LIMIT $3
), gone AS (
    DELETE FROM queen.ephemeral_messages m
     USING first f
     WHERE m.incarnation = $1 AND m.partition = $2 AND m.seq = f.seq
       AND (f.rn <= $4 OR f.before < $5)
    RETURNING m.bytes
)
SELECT count(*)::bigint AS n, coalesce(sum(bytes), 0)::bigint AS bytes FROM gone
