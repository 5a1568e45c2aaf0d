-- Every cursor state holding lease $1, unexpired, locked (by partition and
-- group) and replaced by one that ends $2 seconds from now (NULL: the
-- queue's lease time), except the states $3[k]/$4[k] (cursor, seq) this
-- renewal already put in. A state replaced by another transaction while
-- this one waited for it is left out (its lock finds it deleted): the
-- caller runs this again, with what it renewed, until it renews none.
-- Only the newest state of a cursor is visible to any snapshot: what the
-- lease index finds is each cursor's.
WITH cur AS (
    SELECT s.cursor_id, s.seq, now() + make_interval(secs => COALESCE($2, q.lease_time)) AS until
      FROM queen.log_cursor_states s
      JOIN queen.log_cursors k ON k.id = s.cursor_id
      JOIN queen.log_partitions p ON p.id = k.partition_id
      JOIN queen.queues q ON q.id = p.queue_id
     WHERE s.lease_id = $1 AND s.lease_expires_at > now()
       AND NOT EXISTS (SELECT 1 FROM unnest($3::int8[], $4::int8[]) AS r(cursor_id, seq)
                        WHERE r.cursor_id = s.cursor_id AND r.seq = s.seq)
     ORDER BY k.partition_id, k.consumer_group
       FOR UPDATE OF s
), gone AS (
    DELETE FROM queen.log_cursor_states d USING cur
     WHERE d.cursor_id = cur.cursor_id AND d.seq = cur.seq
 RETURNING d.*, cur.until
)
INSERT INTO queen.log_cursor_states (cursor_id, seq, committed, lease_id, lease_expires_at, lease_start,
                                     lease_end, lease_state, head_offset, head_attempts, retry_at)
SELECT cursor_id, seq + 1, committed, lease_id, until, lease_start, lease_end, lease_state,
       head_offset, head_attempts, retry_at
  FROM gone
RETURNING cursor_id, seq, (extract(epoch FROM lease_expires_at) * 1000000)::int8 AS lease_expires_us
