INSERT INTO queen.retention_history (partition_id, retention_type, messages_deleted)
SELECT id, '__partition_deleted__', 0 FROM unnest($1::int8[]) AS d(id)
