-- The query named $1, locked against another registration of it (NO KEY
-- UPDATE: a cycle writing its state checks the row with KEY SHARE and
-- passes).
SELECT id, config_hash, source_queue, sink_queue
  FROM queen.stream_queries
 WHERE name = $1
   FOR NO KEY UPDATE
