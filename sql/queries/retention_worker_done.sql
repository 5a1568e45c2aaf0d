INSERT INTO queen.retention_work_done (token, worker, segments, messages, txns, evicted, error, failed, failing)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
