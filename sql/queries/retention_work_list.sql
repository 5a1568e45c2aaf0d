-- The plan of one retention cycle: a rule row per queue (phase 0), the due
-- partitions of phases 1 (retention rules 1 and 2), 2 (sidecar purge) and 3
-- (max-wait eviction), oldest first, and the queues holding dead letters past
-- their DLQ retention (phase 4). The rules placeholder takes
-- retention_rules.sql; the due cap is written in as a literal: a bound
-- parameter would make the planner guess its selectivity.
WITH clock AS MATERIALIZED (SELECT now() AS now),
rules AS MATERIALIZED (SELECT q.id AS queue_id, {rules} FROM queen.queues q CROSS JOIN clock c),
p1 AS (SELECT 1 AS phase, r.queue_id, d.id, d.w FROM rules r
         CROSS JOIN LATERAL (
             SELECT p.id, p.oldest_live_at AS w FROM queen.log_partitions p
              WHERE p.queue_id = r.queue_id AND p.oldest_live_at IS NOT NULL
                AND p.oldest_live_at < GREATEST(r.all_cutoff, r.completed_cutoff)
              ORDER BY p.oldest_live_at LIMIT {cap}) d
        ORDER BY w LIMIT {cap}),
p2 AS (SELECT 2 AS phase, r.queue_id, d.id, d.w FROM rules r
         CROSS JOIN LATERAL (
             SELECT p.id, p.oldest_txn_at AS w FROM queen.log_partitions p
              WHERE p.queue_id = r.queue_id AND p.oldest_txn_at IS NOT NULL
                AND p.oldest_txn_at < r.txn_cutoff
              ORDER BY p.oldest_txn_at LIMIT {cap}) d
        ORDER BY w LIMIT {cap}),
p3 AS (SELECT 3 AS phase, r.queue_id, d.id, d.w FROM rules r
         CROSS JOIN LATERAL (
             SELECT p.id, p.oldest_live_at AS w FROM queen.log_partitions p
              WHERE p.queue_id = r.queue_id AND p.oldest_live_at IS NOT NULL
                AND p.oldest_live_at < r.max_wait_cutoff
              ORDER BY p.oldest_live_at LIMIT {cap}) d
        ORDER BY w LIMIT {cap})
SELECT 0 AS phase, queue_id, NULL::int8 AS partition_id, all_cutoff, completed_cutoff, txn_cutoff,
       max_wait_cutoff, NULL::int8 AS watermark_us, dlq_cutoff FROM rules
UNION ALL SELECT phase, queue_id, id, NULL, NULL, NULL, NULL, (extract(epoch FROM w) * 1000000)::int8, NULL FROM p1
UNION ALL SELECT phase, queue_id, id, NULL, NULL, NULL, NULL, (extract(epoch FROM w) * 1000000)::int8, NULL FROM p2
UNION ALL SELECT phase, queue_id, id, NULL, NULL, NULL, NULL, (extract(epoch FROM w) * 1000000)::int8, NULL FROM p3
UNION ALL SELECT 4, r.queue_id, NULL, NULL, NULL, NULL, NULL, NULL, NULL FROM rules r
 WHERE r.dlq_cutoff IS NOT NULL
   AND EXISTS (SELECT 1 FROM queen.log_dlq d WHERE d.queue_id = r.queue_id AND d.failed_at < r.dlq_cutoff)
