DELETE FROM queen.retention_failures f
WHERE (f.partition_id, f.phase) NOT IN (SELECT k, p FROM unnest($1::int8[], $2::int2[]) AS u(k, p))
