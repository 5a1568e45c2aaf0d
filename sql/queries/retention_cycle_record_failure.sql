INSERT INTO queen.retention_failures AS f (partition_id, phase, skip, streak, sqlstate, error)
VALUES ($1, $2, 1, 1, $3, $4)
ON CONFLICT (partition_id, phase) DO UPDATE
   SET streak = LEAST(f.streak + 1, 30),
       skip = LEAST(power(2, LEAST(f.streak + 1, 30) - 1)::int, $5),
       sqlstate = EXCLUDED.sqlstate, error = EXCLUDED.error, failed_at = now()
