-- A registration's queues $2, $3 and operator chain's hash $4 stored on
-- query $1.
UPDATE queen.stream_queries
   SET source_queue = $2, sink_queue = $3, config_hash = $4, updated_at = now()
 WHERE id = $1
