INSERT INTO queen.maintenance_leases (task) VALUES ('retention'), ('retention_watermark'), ('partition_cleanup')
ON CONFLICT (task) DO NOTHING
