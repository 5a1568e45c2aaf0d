-- The last offset of each partition $1, which this transaction holds
-- locked since an earlier statement (so this statement's snapshot sees
-- every push that committed before the lock): the newest segment's end,
-- or log_start - 1 when retention deleted every segment.
SELECT p.id, COALESCE(t.end_offset, p.log_start - 1) AS last_offset
  FROM queen.log_partitions p
  LEFT JOIN LATERAL (SELECT s.end_offset FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
 WHERE p.id = ANY($1)
