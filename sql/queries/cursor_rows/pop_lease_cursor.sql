-- A schema not yet updated to 0.5.0, whose queen.log_consumers is a table
-- of rows updated in place (catalog/cursors.rs): as the statement of the
-- same name one level up was before.
UPDATE queen.log_consumers SET committed = $3, lease_id = $4,
      lease_expires_at = now() + make_interval(secs => $5),
      lease_start = $6, lease_end = $7, lease_state = $8,
      head_offset = $6, head_attempts = $9, retry_at = NULL
WHERE partition_id = $1 AND consumer_group = $2
