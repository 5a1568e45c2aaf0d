-- A schema not yet updated to 0.5.0, whose queen.log_consumers is a table
-- of rows updated in place (catalog/cursors.rs): as the statement of the
-- same name one level up was before.
INSERT INTO queen.log_consumers AS c (partition_id, consumer_group, committed)
SELECT p.id, $2,
       CASE $3 WHEN 'beginning' THEN p.log_start - 1
               WHEN 'end' THEN COALESCE(t.end_offset, p.log_start - 1)
               ELSE GREATEST(p.log_start - 1, COALESCE(
                   (SELECT s.end_offset FROM queen.log_segments s
                     WHERE s.partition_id = p.id AND s.created_at < $4::timestamptz
                     ORDER BY s.base_offset DESC LIMIT 1), -1)) END
  FROM queen.log_partitions p
  LEFT JOIN LATERAL (SELECT s.end_offset, s.created_at FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t ON true
 WHERE p.queue_id = $1
 ORDER BY p.id
ON CONFLICT (partition_id, consumer_group) DO UPDATE
   SET committed = EXCLUDED.committed, lease_id = NULL, lease_expires_at = NULL, lease_start = NULL,
       lease_end = NULL, lease_state = NULL, head_offset = NULL, head_attempts = 0, retry_at = NULL
RETURNING 1
