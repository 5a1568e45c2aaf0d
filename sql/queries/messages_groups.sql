-- Every consumer group of a partition (subscribed to its queue, or holding
-- a cursor on it) and its cursor there, if any.
SELECT g.consumer_group, c.committed, c.lease_start, c.lease_end,
       (c.lease_id IS NOT NULL AND c.lease_expires_at > now()) AS leased,
       (extract(epoch FROM c.lease_expires_at) * 1000000)::int8 AS lease_expires_us
  FROM (SELECT consumer_group FROM queen.consumer_groups WHERE queue_id = $2
        UNION
        SELECT consumer_group FROM queen.log_consumers WHERE partition_id = $1) g
  LEFT JOIN queen.log_consumers c ON c.partition_id = $1 AND c.consumer_group = g.consumer_group
 ORDER BY g.consumer_group
