-- A group's cursor in a partition: its newest version.
SELECT ver AS ver, next_seq AS next_seq, skipped AS skipped
  FROM queen.ephemeral_cursors
 WHERE incarnation = $1 AND partition = $2 AND grp = $3
 ORDER BY ver DESC
 LIMIT 1
