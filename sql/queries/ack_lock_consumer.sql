-- The cursor of group $2 on partition $1 locked: its newest state (n, the
-- first visible entry of a backward probe) taken FOR UPDATE, with the
-- sidecar rows covering the lease it holds (none without one). When
-- another transaction replaced that state while this one waited for it,
-- the lock is granted on the replaced state: the caller finds so
-- (cursor_state_replaced.sql) and asks again, in a statement whose
-- snapshot sees the new state. One the retention cycle deleted meanwhile
-- answers no row, with the same outcome. The locked
-- state is materialized first, so the sidecar is read for its lease; its
-- key (cursor_id, state_seq) goes to the statement that replaces it
-- (ack_settle_advance.sql, ack_settle_retry.sql). It
-- is locked in a subquery of its own, probed by its whole key (joined
-- directly, the planner may probe the cursor's id alone and read every
-- state a held snapshot keeps).
WITH c AS MATERIALIZED (
    SELECT s.cursor_id, s.seq AS state_seq, s.committed, s.lease_id, s.lease_start, s.lease_end, s.lease_state,
           s.head_offset, s.head_attempts, q.retry_limit, q.retry_delay, q.id AS queue_id
      FROM queen.log_cursors k
     CROSS JOIN LATERAL (SELECT n.seq FROM queen.log_cursor_states n
                          WHERE n.cursor_id = k.id ORDER BY n.seq DESC LIMIT 1) n
     CROSS JOIN LATERAL (SELECT s.* FROM queen.log_cursor_states s
                          WHERE s.cursor_id = k.id AND s.seq = n.seq FOR UPDATE) s
      JOIN queen.log_partitions p ON p.id = k.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE k.partition_id = $1 AND k.consumer_group = $2)
SELECT c.*, t.base_offset, t.txn_hashes
  FROM c LEFT JOIN LATERAL (
       SELECT base_offset, txn_hashes FROM queen.log_txns
        WHERE partition_id = $1 AND base_offset <= c.lease_end
          AND base_offset >= COALESCE((SELECT max(base_offset) FROM queen.log_txns
                                        WHERE partition_id = $1 AND base_offset <= c.lease_start), c.lease_start)
  ) t ON c.lease_id IS NOT NULL
