-- A schema not yet updated to 0.5.0, whose queen.log_consumers is a table
-- of rows updated in place (catalog/cursors.rs): as the statement of the
-- same name one level up was before.
INSERT INTO queen.log_consumers (partition_id, consumer_group, committed) VALUES ($1, $2, $3)
ON CONFLICT (partition_id, consumer_group) DO NOTHING
