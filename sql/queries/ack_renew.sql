-- Every cursor whose newest state (in this statement's snapshot) holds
-- lease $1 unexpired: that state locked (by partition and group) and
-- followed by one that ends $2 seconds from now (NULL: the queue's lease
-- time), except the states $3[k]/$4[k] (cursor, seq) this renewal already
-- put in. A state replaced by a transaction that committed after this
-- statement's snapshot was taken (while it waited for the lock, or just
-- before) gets no follower (its seq + 1 is taken) and answers a NULL
-- expiry: the caller runs this again, in a statement whose snapshot sees
-- the replacement, until a run answers no row. The lease index finds the
-- replaced states of a cursor too (until the retention cycle deletes
-- them); only the newest of each is renewed.
WITH cur AS (
    SELECT s.cursor_id, s.seq, s.committed, s.lease_id, s.lease_start, s.lease_end, s.lease_state,
           s.head_offset, s.head_attempts, s.retry_at,
           now() + make_interval(secs => COALESCE($2, q.lease_time)) AS until
      FROM queen.log_cursor_states s
      JOIN queen.log_cursors k ON k.id = s.cursor_id
      JOIN queen.log_partitions p ON p.id = k.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE s.lease_id = $1 AND s.lease_expires_at > now()
       AND NOT EXISTS (SELECT 1 FROM queen.log_cursor_states n
                        WHERE n.cursor_id = s.cursor_id AND n.seq > s.seq)
       AND NOT EXISTS (SELECT 1 FROM unnest($3::int8[], $4::int8[]) AS r(cursor_id, seq)
                        WHERE r.cursor_id = s.cursor_id AND r.seq = s.seq)
     ORDER BY k.partition_id, k.consumer_group
       FOR UPDATE OF s
), put AS (
    INSERT INTO queen.log_cursor_states (cursor_id, seq, committed, lease_id, lease_expires_at, lease_start,
                                         lease_end, lease_state, head_offset, head_attempts, retry_at)
    SELECT cursor_id, seq + 1, committed, lease_id, until, lease_start, lease_end, lease_state,
           head_offset, head_attempts, retry_at
      FROM cur
    ON CONFLICT (cursor_id, seq) DO NOTHING
    RETURNING cursor_id, seq, lease_expires_at
)
SELECT cur.cursor_id, put.seq, (extract(epoch FROM put.lease_expires_at) * 1000000)::int8 AS lease_expires_us
  FROM cur LEFT JOIN put ON put.cursor_id = cur.cursor_id
