-- How far the tail of a partition (now $6) must move to drop at least $4
-- messages or $5 bytes, at most $3 messages at a time: one past the last
-- sequence number of the oldest messages needed (NULL: none stored).
SELECT max(seq) + 1 AS upto
  FROM (SELECT seq, row_number() OVER w AS rn, sum(bytes) OVER w - bytes AS before
          FROM queen.ephemeral_messages
         WHERE incarnation = $1 AND partition = $2 AND seq >= $6
        WINDOW w AS (ORDER BY seq)
         ORDER BY seq
         LIMIT $3) f
 WHERE f.rn <= $4 OR f.before < $5
