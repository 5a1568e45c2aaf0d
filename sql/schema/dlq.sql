-- queen: dead letters and what DLQ retention removed.

-- Dead-lettered messages. Written narrow: a pointer to the frame
-- (partition, offset, group) plus the failure; the payload is read from the
-- segment. The wide columns are filled only when the segment is about to be
-- reclaimed, so a failure never disappears with its segment. No foreign key:
-- queue deletion removes these rows explicitly.
-- The transaction id is kept from the start: it is how an operator names the
-- message (retry, delete) long after the sidecar forgot it.
CREATE TABLE queen.log_dlq (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    queue_id       bigint NOT NULL,
    partition_id   bigint NOT NULL,
    consumer_group text NOT NULL,
    message_offset bigint NOT NULL,
    transaction_id text NOT NULL,
    error          text,
    attempts       integer NOT NULL,
    failed_at      timestamptz NOT NULL DEFAULT now(),
    -- wide columns: NULL while the row is narrow (created_at marks a wide row)
    message_id     uuid,
    trace_id       uuid,
    -- the frame's payload bytes as the push stored them (one JSON document),
    -- so a widened row answers byte for byte what its frame did
    payload        bytea,
    created_at     timestamptz,
    UNIQUE (partition_id, consumer_group, message_offset)
);
CREATE INDEX idx_log_dlq_partition_failed_at ON queen.log_dlq (partition_id, failed_at DESC);
-- DLQ retention's due probe and the by-queue readers.
CREATE INDEX idx_log_dlq_queue_failed_at ON queen.log_dlq (queue_id, failed_at);
CREATE INDEX idx_log_dlq_partition_txn ON queen.log_dlq (partition_id, transaction_id);

-- What DLQ retention removed, per queue: cumulative, never decreasing, and
-- written in the same transaction as the purge it counts.
CREATE TABLE queen.queue_terminal_rollups (
    queue_id            bigint PRIMARY KEY REFERENCES queen.queues (id) ON DELETE CASCADE,
    pruned_failed_count bigint NOT NULL DEFAULT 0,
    updated_at          timestamptz NOT NULL DEFAULT now()
);
