-- The first sequence number in [$3, $4) of a message of the partition not
-- older than $5 seconds (messages are stored in the order of their time):
-- the tail past the expired ones. NULL: every one in the range expired.
SELECT min(seq) AS seq
  FROM queen.ephemeral_messages
 WHERE incarnation = $1 AND partition = $2 AND seq >= $3 AND seq < $4
   AND created_at >= clock_timestamp() - $5 * interval '1 second'
