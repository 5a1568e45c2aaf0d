-- Whether the state ($1, $2) (cursor id, seq), which this transaction has
-- just locked, has been replaced: a newer state of its cursor exists. Its
-- own statement, so its snapshot is taken after the lock was granted and
-- sees every state committed by the transactions that held it before.
-- Probed forward from the locked key: the states above it are the few a
-- replacement put there.
SELECT EXISTS (SELECT 1 FROM queen.log_cursor_states
                WHERE cursor_id = $1 AND seq > $2) AS replaced
