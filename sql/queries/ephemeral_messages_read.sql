-- Up to $4 stored messages of a partition from sequence number $3 on.
SELECT seq AS seq, payload::text AS payload
  FROM queen.ephemeral_messages
 WHERE incarnation = $1 AND partition = $2 AND seq >= $3
 ORDER BY seq
 LIMIT $4
