SELECT task, enabled, lease_holder,
       lease_expires_at > now() AS leased,
       (extract(epoch FROM next_due_at) * 1000000)::int8 AS next_due_us,
       (extract(epoch FROM lease_expires_at) * 1000000)::int8 AS lease_expires_us,
       (extract(epoch FROM last_started_at) * 1000000)::int8 AS last_started_us,
       (extract(epoch FROM last_finished_at) * 1000000)::int8 AS last_finished_us,
       last_error
  FROM queen.maintenance_leases
 ORDER BY task
