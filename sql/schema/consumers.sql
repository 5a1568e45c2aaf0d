-- queen: consumer cursors and consumer-group subscriptions.

-- Coordination per (partition, consumer group): the cursor, the lease and the
-- retry budget.
--   committed       every offset <= committed is done for this group
--   lease_*         the batch handed out: lease_start..lease_end, one byte of
--                   state per offset in lease_state (0 open, 1 done, 2 failed,
--                   3 retry)
--   head_offset     the offset whose deliveries head_attempts counts
CREATE TABLE queen.log_consumers (
    partition_id     bigint NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    consumer_group   text NOT NULL,
    committed        bigint NOT NULL,
    lease_id         uuid,
    lease_expires_at timestamptz,
    lease_start      bigint,
    lease_end        bigint,
    lease_state      bytea,
    head_offset      bigint,
    head_attempts    integer NOT NULL DEFAULT 0,
    retry_at         timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (partition_id, consumer_group)
) WITH (
    -- Rewritten by every pop and ack. Half of each page is left free so a
    -- row's new version lands on its page (no free-space search; an ack that
    -- leaves the lease open is a HOT update). A pop that takes a lease and an
    -- ack that ends one change lease_id, which idx_log_consumers_lease
    -- covers: those updates are not HOT and add index entries, which the
    -- settings below have vacuum clear after every 500 dead rows.
    fillfactor = 50,
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 500,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);
-- Lease renewal and multi-partition acks find their rows by lease id.
CREATE INDEX idx_log_consumers_lease ON queen.log_consumers (lease_id) WHERE lease_id IS NOT NULL;

-- A consumer group's subscription on a queue: where a new cursor starts.
CREATE TABLE queen.consumer_groups (
    queue_id          bigint NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    consumer_group    text NOT NULL,
    subscription_mode text NOT NULL CHECK (subscription_mode IN ('all', 'new', 'timestamp')),
    subscription_from timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (queue_id, consumer_group)
);
