-- queen: ephemeral queues. Their declared configuration is an ordinary
-- (logged) table and survives anything; their messages, cursors and leases
-- live in UNLOGGED tables: writing them costs no WAL, and PostgreSQL
-- empties them on crash recovery, so the contents are lost on a crash
-- (docs/ephemeral.md). A queue's incarnation (drawn from a logged
-- sequence, so never drawn twice) keys every row it holds and is written
-- into the ids it delivers: an id of an incarnation that is gone (a crash,
-- a reset, a delete) is answered stale.

-- The declared queues: options as configured (the closed list of
-- queen.ephemeral_configure), kept across restarts and crashes.
CREATE TABLE queen.ephemeral_queues (
    queue      text COLLATE "C" PRIMARY KEY,
    options    jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

CREATE SEQUENCE queen.ephemeral_incarnation_seq;

-- No row here is updated by the message path (docs/architecture.md,
-- "MVCC"): what a push, a pop or an ack changes is a new row. A queue's
-- tallies, a partition's bounds and a group's cursor are each a series of
-- versions, ver 0 first; the newest (highest ver) is the value, and the
-- writer, holding it locked, inserts the next and deletes the one it
-- replaces. A snapshot held open elsewhere then leaves deleted versions
-- behind, but no chain: the value is the first entry of a backward probe of
-- the key, whatever lies below it.

-- One row per live queue (declared or implicit): its incarnation, written
-- once. Absent after a crash: the next call draws a new incarnation.
CREATE UNLOGGED TABLE queen.ephemeral_state (
    queue       text COLLATE "C" PRIMARY KEY,
    incarnation bigint NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- What a live queue holds and what it dropped, as versions: every write
-- to the queue locks the newest (the queue's lock), so the tallies are
-- exact.
CREATE UNLOGGED TABLE queen.ephemeral_tallies (
    incarnation  bigint NOT NULL,
    ver          bigint NOT NULL,
    depth        bigint NOT NULL DEFAULT 0,
    bytes        bigint NOT NULL DEFAULT 0,
    drops_bounds bigint NOT NULL DEFAULT 0,
    drops_ttl    bigint NOT NULL DEFAULT 0,
    drops_retry  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (incarnation, ver)
) WITH (
    -- Inserted and deleted per call: vacuum on a dead-row count, never
    -- throttled, no heap truncation (its ACCESS EXCLUSIVE would stall
    -- every call).
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);

-- A queue's partitions, written once each.
CREATE UNLOGGED TABLE queen.ephemeral_partitions (
    incarnation bigint NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    PRIMARY KEY (incarnation, partition)
);

-- A partition's bounds, as versions: sequence numbers [tail, head) may be
-- stored. Every write to a partition locks the newest.
CREATE UNLOGGED TABLE queen.ephemeral_partition_states (
    incarnation bigint NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    ver         bigint NOT NULL,
    tail        bigint NOT NULL DEFAULT 1,
    head        bigint NOT NULL DEFAULT 1,
    depth       bigint NOT NULL DEFAULT 0,
    bytes       bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (incarnation, partition, ver)
) WITH (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);

CREATE UNLOGGED TABLE queen.ephemeral_messages (
    incarnation bigint NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    seq         bigint NOT NULL,
    payload     jsonb NOT NULL,
    bytes       integer NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (incarnation, partition, seq)
);

-- The consumer groups a queue has seen (queue mode is __QUEUE_MODE__): a
-- message is removed only once every one of them has passed it.
CREATE UNLOGGED TABLE queen.ephemeral_groups (
    incarnation bigint NOT NULL,
    grp         text COLLATE "C" NOT NULL,
    PRIMARY KEY (incarnation, grp)
);

-- A group's cursor in a partition, as versions: the next sequence number
-- it is handed, and how many messages were removed before it read them.
-- Written by pops, which hold the partition's lock.
CREATE UNLOGGED TABLE queen.ephemeral_cursors (
    incarnation bigint NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    grp         text COLLATE "C" NOT NULL,
    ver         bigint NOT NULL,
    next_seq    bigint NOT NULL,
    skipped     bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (incarnation, partition, grp, ver)
) WITH (
    autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000,
    autovacuum_vacuum_cost_delay = 0,
    vacuum_truncate = off
);

-- Delivered, not yet acknowledged messages of a group ('-infinity': handed
-- back by a failed or retry ack, due at once).
CREATE UNLOGGED TABLE queen.ephemeral_leases (
    incarnation bigint NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    grp         text COLLATE "C" NOT NULL,
    seq         bigint NOT NULL,
    attempts    integer NOT NULL,
    lease_until timestamptz NOT NULL,
    PRIMARY KEY (incarnation, partition, grp, seq)
);

-- When a live queue ('') and each of its consumer groups was last named
-- by a push or a pop: written at most once per quarter of the shorter
-- idle period (queen.ephemeral_implicit_idle_seconds,
-- queen.ephemeral_group_idle_seconds), never per message. The retention
-- cycle forgets groups and removes empty implicit queues past those
-- periods (docs/ephemeral.md, "Idle queues and groups").
CREATE UNLOGGED TABLE queen.ephemeral_seen (
    incarnation bigint NOT NULL,
    grp         text COLLATE "C" NOT NULL,
    seen_at     timestamptz NOT NULL,
    PRIMARY KEY (incarnation, grp)
);
CREATE INDEX ephemeral_seen_at ON queen.ephemeral_seen (seen_at);

-- Incarnations ended by a reset or a delete, whose rows the push and pop
-- path removes in bounded steps (queen.ephemeral_cleanup_batch).
CREATE UNLOGGED TABLE queen.ephemeral_retired (
    incarnation bigint PRIMARY KEY,
    retired_at  timestamptz NOT NULL DEFAULT now()
);
