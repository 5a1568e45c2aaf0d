UPDATE queen.maintenance_leases
  SET last_finished_at = CASE WHEN $2::text IS NULL THEN now() ELSE last_finished_at END,
      last_error = $2
WHERE task = 'retention' AND fencing_token = $1 AND lease_holder IS NOT NULL
