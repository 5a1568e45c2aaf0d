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

-- No row here is updated or deleted by the message path
-- (docs/architecture.md, "MVCC"): what a push, a pop or an ack changes is a
-- new row. A queue's tallies, a partition's bounds, a group's cursor and a
-- lease are each a series of versions, ver 0 first; the newest (highest
-- ver) is the value. Every write to a queue holds its state row locked (a
-- lock marks the row, it makes no version), so a key has one writer at a
-- time. Messages every group has passed lie below their partition's tail
-- and are read by nothing. The retention cycle deletes what the path left
-- behind (the replaced versions, the messages below a tail, the settled
-- leases) in bounded steps, and only once its last deletions are
-- reclaimable: a snapshot held open elsewhere leaves live rows that no
-- probe reads, not dead ones.

-- One row per live queue (declared or implicit): its incarnation, written
-- once, and the queue's lock. Absent after a crash: the next call draws a
-- new incarnation.
CREATE UNLOGGED TABLE queen.ephemeral_state (
    queue       text COLLATE "C" PRIMARY KEY,
    incarnation bigint NOT NULL UNIQUE,
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- What a live queue holds and what it dropped, as versions: every write
-- to the queue holds the queue's lock, so the tallies are exact.
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
    -- A version per call, deleted by the cycle: vacuum on a dead-row
    -- count, never throttled, no heap truncation (its ACCESS EXCLUSIVE
    -- would stall every call).
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
-- stored; the rows below the tail wait for the cycle.
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
-- Written by pops.
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

-- A group's leases on the messages it was handed, as versions: a delivery
-- (until its lease runs out), a hand-back by a failed or retry ack
-- ('-infinity': due at once), a settlement ('infinity': acknowledged, or
-- dropped past the retry limit). The newest is the lease's state.
CREATE UNLOGGED TABLE queen.ephemeral_leases (
    incarnation bigint NOT NULL,
    partition   text COLLATE "C" NOT NULL,
    grp         text COLLATE "C" NOT NULL,
    seq         bigint NOT NULL,
    attempts    integer NOT NULL,
    lease_until timestamptz NOT NULL,
    ver         integer NOT NULL,
    PRIMARY KEY (incarnation, partition, grp, seq, ver)
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
