INSERT INTO queen.retention_backoff AS b (partition_id, skip, streak) VALUES ($1, 1, 1)
ON CONFLICT (partition_id) DO UPDATE
   SET streak = LEAST(b.streak + 1, 30),
       skip = LEAST(power(2, LEAST(b.streak + 1, 30) - 1)::int, $2)
