DELETE FROM queen.retention_work w
WHERE (w.token, w.seq) = (SELECT token, seq FROM queen.retention_work WHERE token = $1
                           ORDER BY seq LIMIT 1 FOR UPDATE SKIP LOCKED)
RETURNING phase, partition_id, all_cutoff, completed_cutoff, cutoff, failing
