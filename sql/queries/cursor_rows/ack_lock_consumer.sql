-- A schema not yet updated to 0.5.0, whose queen.log_consumers is a table
-- of rows updated in place (catalog/cursors.rs): as the statement of the
-- same name one level up was before, with no state key (NULL).
WITH c AS MATERIALIZED (
    SELECT NULL::int8 AS cursor_id, NULL::int8 AS state_seq, c.committed, c.lease_id, c.lease_start, c.lease_end, c.lease_state,
           c.head_offset, c.head_attempts, q.retry_limit, q.retry_delay, q.id AS queue_id
      FROM queen.log_consumers c
      JOIN queen.log_partitions p ON p.id = c.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE c.partition_id = $1 AND c.consumer_group = $2
       FOR UPDATE OF c)
SELECT c.*, t.base_offset, t.txn_hashes
  FROM c LEFT JOIN LATERAL (
       SELECT base_offset, txn_hashes FROM queen.log_txns
        WHERE partition_id = $1 AND base_offset <= c.lease_end
          AND base_offset >= COALESCE((SELECT max(base_offset) FROM queen.log_txns
                                        WHERE partition_id = $1 AND base_offset <= c.lease_start), c.lease_start)
  ) t ON c.lease_id IS NOT NULL
