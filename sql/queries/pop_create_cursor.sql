-- The cursor of group $2 on partition $1, made at $3 (its state seq 0),
-- unless it exists.
WITH k AS (
    INSERT INTO queen.log_cursors (partition_id, consumer_group) VALUES ($1, $2)
    ON CONFLICT (partition_id, consumer_group) DO NOTHING
    RETURNING id)
INSERT INTO queen.log_cursor_states (cursor_id, seq, committed) SELECT id, 0, $3 FROM k
