-- The lowest sequence number a partition still stores at or after $3.
SELECT min(seq) AS seq
  FROM queen.ephemeral_messages
 WHERE incarnation = $1 AND partition = $2 AND seq >= $3
