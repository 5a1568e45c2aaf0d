SELECT count(*)::int8 AS total FROM queen.log_dlq d JOIN queen.log_partitions p ON p.id = d.partition_id
WHERE ($1::int8 IS NULL OR d.queue_id = $1) AND ($2::text IS NULL OR d.consumer_group = $2)
  AND ($3::timestamptz IS NULL OR d.failed_at >= $3) AND ($4::timestamptz IS NULL OR d.failed_at < $4)
  AND ($5::text IS NULL OR p.name = $5)
