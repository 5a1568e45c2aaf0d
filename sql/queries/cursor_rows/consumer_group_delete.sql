-- A schema not yet updated to 0.5.0, whose queen.log_consumers is a table
-- of rows updated in place (catalog/cursors.rs): as the statement of the
-- same name one level up was before.
WITH locked AS (
    SELECT c.partition_id FROM queen.log_consumers c JOIN queen.log_partitions p ON p.id = c.partition_id
     WHERE c.consumer_group = $1 AND ($2::int8 IS NULL OR p.queue_id = $2)
     ORDER BY c.partition_id FOR UPDATE OF c)
DELETE FROM queen.log_consumers c USING locked l
 WHERE c.partition_id = l.partition_id AND c.consumer_group = $1 RETURNING 1
