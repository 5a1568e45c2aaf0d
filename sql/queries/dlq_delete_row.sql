DELETE FROM queen.log_dlq WHERE id = $1 RETURNING 1 AS deleted
