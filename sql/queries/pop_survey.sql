-- The partitions of queue $1 that group $2 has done, $3 at most, with
-- the end they were found done at: a cursor whose committed offset reaches
-- the newest segment's end. A pop keeps them (its memo, engine/pop.rs) and
-- passes them by while nothing is pushed to them and no cursor moves back.
-- A partition with no segment left is not listed. Read whole, each
-- partition's cursor and newest segment probed by key (the caller plans it
-- with no sequential scan, hash or merge join: spi::exec_probing).
SELECT p.id AS id, p.name AS name, t.end_offset AS end_offset
  FROM queen.log_partitions p
 CROSS JOIN LATERAL (SELECT c.committed FROM queen.log_consumers c
                      WHERE c.partition_id = p.id AND c.consumer_group = $2 OFFSET 0) c
 CROSS JOIN LATERAL (SELECT s.end_offset FROM queen.log_segments s
                      WHERE s.partition_id = p.id ORDER BY s.base_offset DESC LIMIT 1) t
 WHERE p.queue_id = $1 AND c.committed >= t.end_offset
 LIMIT $3
