UPDATE queen.maintenance_leases
  SET lease_holder = $2,
      lease_expires_at = now() + make_interval(secs => $3 / 1000.0),
      fencing_token = fencing_token + 1,
      last_started_at = now()
WHERE task = $1 AND enabled AND next_due_at <= now()
  AND (lease_expires_at IS NULL OR lease_expires_at <= now())
RETURNING fencing_token
