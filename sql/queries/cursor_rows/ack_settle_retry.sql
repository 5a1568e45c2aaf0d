-- A schema not yet updated to 0.5.0, whose queen.log_consumers is a table
-- of rows updated in place (catalog/cursors.rs): as the statement of the
-- same name one level up was before.
UPDATE queen.log_consumers SET committed = $3, lease_id = NULL, lease_start = NULL, lease_end = NULL,
      lease_state = NULL, head_offset = $4, head_attempts = $5,
      retry_at = CASE WHEN $6::int4 IS NULL THEN NULL
                      ELSE now() + make_interval(secs => $6::int4 / 1000.0) END
WHERE partition_id = $1 AND consumer_group = $2
