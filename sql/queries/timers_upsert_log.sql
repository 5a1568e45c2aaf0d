-- Schedules (queue $1, key $2) as a new schedule, message id $7: the row
-- is inserted, or the one there (locked, timers_lock.sql) replaced (made
-- anew when it had fired: its creation too). Due
-- $6 ms from now, and never before the clock at this write, which comes
-- after the transaction took its id (the floors of the due scan rely on
-- both: sweeper_timers_cap.sql).
INSERT INTO queen.log_timers AS t (queue, timer_key, partition, payload, transaction_id, message_id, deliver_at)
VALUES ($1, $2, $3, $4, $5, $7, GREATEST(now() + make_interval(secs => $6 / 1000.0), clock_timestamp()))
ON CONFLICT (queue, timer_key) DO UPDATE
   SET partition = EXCLUDED.partition, payload = EXCLUDED.payload, transaction_id = EXCLUDED.transaction_id,
       message_id = EXCLUDED.message_id, deliver_at = EXCLUDED.deliver_at,
       created_at = CASE WHEN EXISTS (SELECT 1 FROM queen.log_timers_done d WHERE d.message_id = t.message_id)
                         THEN EXCLUDED.created_at ELSE t.created_at END
RETURNING (extract(epoch FROM t.deliver_at) * 1000000)::int8 AS deliver_us, (xmax <> 0) AS conflicted
