-- What a cycle without an ack (an idle flush) of query $1 over source
-- partition $2, group $3, must know before it writes keys $4: whether the
-- group holds a live lease on the partition (a batch in flight), and each
-- key's age in milliseconds (no row for a key that does not exist).
SELECT NULL::text AS key,
       EXISTS (SELECT 1 FROM queen.log_consumers c
                WHERE c.partition_id = $2 AND c.consumer_group = $3
                  AND c.lease_id IS NOT NULL AND c.lease_expires_at > clock_timestamp()) AS leased,
       NULL::float8 AS age_ms
UNION ALL
SELECT s.key, NULL,
       extract(epoch FROM clock_timestamp() - s.updated_at) * 1000
  FROM queen.stream_state s
 WHERE s.query_id = $1 AND s.partition_id = $2 AND s.key = ANY ($4)
