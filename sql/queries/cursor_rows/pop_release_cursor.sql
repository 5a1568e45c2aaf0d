-- A schema not yet updated to 0.5.0, whose queen.log_consumers is a table
-- of rows updated in place (catalog/cursors.rs): as the statement of the
-- same name one level up was before.
UPDATE queen.log_consumers SET committed = $3, lease_id = NULL, lease_expires_at = now(),
      lease_start = NULL, lease_end = NULL, lease_state = NULL,
      head_offset = NULL, head_attempts = 0, retry_at = NULL
WHERE partition_id = $1 AND consumer_group = $2
