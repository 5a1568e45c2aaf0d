-- A schema not yet updated to 0.5.0, whose queen.log_consumers is a table
-- of rows updated in place (catalog/cursors.rs): as the statement of the
-- same name one level up was before.
UPDATE queen.log_consumers c
  SET lease_expires_at = now() + make_interval(secs => COALESCE($2, q.lease_time))
 FROM queen.log_partitions p JOIN queen.queues q ON q.id = p.queue_id
WHERE c.lease_id = $1 AND c.lease_expires_at > now() AND p.id = c.partition_id
RETURNING (extract(epoch FROM c.lease_expires_at) * 1000000)::int8 AS lease_expires_us
