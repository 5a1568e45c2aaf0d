UPDATE queen.log_consumers SET committed = $3, lease_id = NULL, lease_start = NULL, lease_end = NULL,
      lease_state = NULL, head_offset = $4, head_attempts = $5,
      retry_at = CASE WHEN $6::int4 IS NULL THEN NULL
                      ELSE now() + make_interval(secs => $6::int4 / 1000.0) END
WHERE partition_id = $1 AND consumer_group = $2
