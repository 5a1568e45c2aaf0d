INSERT INTO queen.retention_history (partition_id, retention_type, messages_deleted, segments_deleted)
VALUES ($1, $2, $3, $4)
