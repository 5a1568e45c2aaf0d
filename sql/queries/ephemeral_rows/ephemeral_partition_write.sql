-- A partition's range and contents, as the caller counted them.
-- ($7, the version a schema of versions holds, is not used here.)
UPDATE queen.ephemeral_partitions
   SET tail = $3, head = $4, depth = $5, bytes = $6
 WHERE incarnation = $1 AND partition = $2
