SELECT last_error FROM queen.maintenance_leases WHERE task = 'retention' AND fencing_token = $1
