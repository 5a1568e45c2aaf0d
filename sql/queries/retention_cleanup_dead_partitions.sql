-- Up to $2 partitions dead at cutoff $1 (queen_internal.log_partition_dead_v1),
-- locked. The function's own checks of the partition's times come first
-- here, so that it runs only for partitions idle since the cutoff, not for
-- every partition of the cluster.
SELECT id FROM queen.log_partitions p
 WHERE p.created_at < $1 AND p.last_write_at < $1
   AND queen_internal.log_partition_dead_v1(p.id, $1)
ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED
