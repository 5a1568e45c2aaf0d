-- The partitions a path that changes dead-letter rows takes first,
-- ascending by id: FOR UPDATE, so that it waits for a retention step
-- (which holds its partition KEY SHARE while it widens those rows) and a
-- step waits for it.
SELECT id FROM queen.log_partitions WHERE id = ANY($1) ORDER BY id FOR UPDATE
