UPDATE queen.log_consumers SET committed = $3, lease_id = NULL, lease_expires_at = now(),
      lease_start = NULL, lease_end = NULL, lease_state = NULL,
      head_offset = NULL, head_attempts = 0, retry_at = NULL
WHERE partition_id = $1 AND consumer_group = $2
