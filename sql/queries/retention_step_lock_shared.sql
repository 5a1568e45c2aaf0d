-- A retention step's first hold on its partition: KEY SHARE, which a push
-- (NO KEY UPDATE) does not wait for, while a message delete, a dead-letter
-- move or retry, a sidecar purge and a queue deletion (FOR UPDATE) do.
SELECT log_start FROM queen.log_partitions WHERE id = $1 FOR KEY SHARE
