-- queen: consumer cursors and consumer-group subscriptions.

-- Coordination per (partition, consumer group): the cursor, the lease and the
-- retry budget. A pop, an ack or a renewal never updates a row here: it
-- locks the cursor's newest state, inserts the next one and deletes the
-- one it locked, in its own transaction (docs/architecture.md, "MVCC").
-- A snapshot held open elsewhere then leaves deleted states behind, but no
-- chain of versions: the newest state is the first entry of a backward
-- probe of (cursor_id, seq), whatever lies below it.

-- One row per (partition, consumer group): written once, when the group
-- first reads the partition (or is moved by a seek), and deleted with the
-- partition or the group.
CREATE TABLE queen.log_cursors (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    partition_id   bigint NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    consumer_group text NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (partition_id, consumer_group)
);

-- A cursor's states, seq 0 first; the newest (highest seq) is the
-- cursor's state, and every writer deletes the one it replaces. No foreign
-- key (a key checked on every pop and ack, and a lock on the cursor row
-- each time): the three deleters of cursors (a group's delete, a queue's,
-- the empty-partition cleanup) delete their states explicitly.
--   committed       every offset <= committed is done for this group
--   lease_*         the batch handed out: lease_start..lease_end, one byte of
--                   state per offset in lease_state (0 open, 1 done, 2 failed,
--                   3 retry)
--   head_offset     the offset whose deliveries head_attempts counts
CREATE TABLE queen.log_cursor_states (
    cursor_id        bigint NOT NULL,
    seq              bigint NOT NULL,
    committed        bigint NOT NULL,
    lease_id         uuid,
    lease_expires_at timestamptz,
    lease_start      bigint,
    lease_end        bigint,
    lease_state      bytea,
    head_offset      bigint,
    head_attempts    integer NOT NULL DEFAULT 0,
    retry_at         timestamptz,
    PRIMARY KEY (cursor_id, seq)
) WITH (
    -- A row inserted and deleted per pop, ack and renewal: vacuum on a
    -- dead-row count, never throttled; no heap truncation (it takes ACCESS
    -- EXCLUSIVE and would stall every pop and ack).
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);
-- Lease renewal and multi-partition acks find their states by lease id.
CREATE INDEX idx_log_cursor_states_lease ON queen.log_cursor_states (lease_id) WHERE lease_id IS NOT NULL;
-- A cursor's newest state is read by a backward probe of (cursor_id, seq)
-- that stops at the first visible entry. The statistics count only live
-- states, one per cursor, and with one row expected the planner may read a
-- cursor's states in key order and sort them instead: every state a
-- snapshot held open elsewhere keeps from being pruned (a pop took 16 ms
-- after eight minutes, 2026-12-06). Telling it each cursor has many makes
-- the probe the cheaper plan.
ALTER TABLE queen.log_cursor_states ALTER COLUMN cursor_id SET (n_distinct = -0.05);

-- Each cursor with its newest state: what every reader reads.
CREATE VIEW queen.log_consumers AS
SELECT k.partition_id, k.consumer_group, s.committed, s.lease_id, s.lease_expires_at,
       s.lease_start, s.lease_end, s.lease_state, s.head_offset, s.head_attempts, s.retry_at,
       k.created_at
  FROM queen.log_cursors k
 CROSS JOIN LATERAL (SELECT s.committed, s.lease_id, s.lease_expires_at, s.lease_start, s.lease_end,
                            s.lease_state, s.head_offset, s.head_attempts, s.retry_at
                       FROM queen.log_cursor_states s
                      WHERE s.cursor_id = k.id
                      ORDER BY s.seq DESC LIMIT 1) s;

-- A consumer group's subscription on a queue: where a new cursor starts.
CREATE TABLE queen.consumer_groups (
    queue_id          bigint NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    consumer_group    text NOT NULL,
    subscription_mode text NOT NULL CHECK (subscription_mode IN ('all', 'new', 'timestamp')),
    subscription_from timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now(),
    -- Whether the group's pops that ask for conflation get it (stored by
    -- the pop that registers the group; never changed after).
    conflation        boolean NOT NULL DEFAULT false,
    PRIMARY KEY (queue_id, consumer_group)
);
