INSERT INTO queen.maintenance_leases (task) VALUES ($1) ON CONFLICT (task) DO NOTHING
