-- A schema not yet updated to 0.5.0, whose queen.log_consumers is a table
-- of rows updated in place (catalog/cursors.rs): as the statement of the
-- same name one level up was before.
SELECT 1 FROM queen.log_consumers WHERE lease_id = $1 AND lease_expires_at > now() LIMIT 1
