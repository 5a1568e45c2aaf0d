-- A query registered for the first time: name $1, source queue $2, sink
-- queue $3, operator chain's hash $4. No row when the name is taken.
INSERT INTO queen.stream_queries (name, source_queue, sink_queue, config_hash)
VALUES ($1, $2, $3, $4)
ON CONFLICT (name) DO NOTHING
RETURNING id
