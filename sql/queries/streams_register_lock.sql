-- The query named $1, locked against another registration of it.
SELECT id, config_hash, source_queue, sink_queue
  FROM queen.stream_queries
 WHERE name = $1
   FOR UPDATE
