SELECT last_finished_at >= last_started_at AND last_error IS NULL AS finished FROM queen.maintenance_leases
WHERE task = 'retention' AND fencing_token = $1
