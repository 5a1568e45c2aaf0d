SELECT 1 FROM queen.log_consumers WHERE lease_id = $1 AND lease_expires_at > now() LIMIT 1
