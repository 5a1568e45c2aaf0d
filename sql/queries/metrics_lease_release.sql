-- As retention_lease_release.sql, but a task that fell behind (the worker
-- was stopped) is next due now rather than once per missed period.
UPDATE queen.maintenance_leases
  SET lease_holder = NULL, lease_expires_at = NULL,
      next_due_at = CASE WHEN $3::int8 IS NULL THEN next_due_at
                         ELSE GREATEST(next_due_at + make_interval(secs => $3 / 1000.0), now()) END,
      last_finished_at = CASE WHEN $3::int8 IS NULL THEN last_finished_at ELSE now() END,
      last_error = $4
WHERE task = $1 AND fencing_token = $2 AND lease_holder IS NOT NULL
RETURNING 1
