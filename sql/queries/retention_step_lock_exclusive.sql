-- A retention step that takes its partition before any leaf, as the lock
-- order says (the step's way when the short hold could not be had).
SELECT log_start FROM queen.log_partitions WHERE id = $1 FOR UPDATE
