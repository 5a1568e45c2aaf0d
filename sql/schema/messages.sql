-- queen: messages deleted by an operator, and the traces consumers record.

-- A live message deleted by an operator: its frame stays in its segment
-- (segments are never rewritten) and every pop skips its offset, for every
-- consumer group, moving the cursor past it. Retention deletes these rows
-- with the segments they point into; a partition's deletion takes them along.
CREATE TABLE queen.log_deleted (
    partition_id   bigint NOT NULL REFERENCES queen.log_partitions (id) ON DELETE CASCADE,
    message_offset bigint NOT NULL,
    transaction_id text NOT NULL,
    deleted_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (partition_id, message_offset)
);

-- What a consumer recorded about a message while handling it. Keyed by the
-- message's address, with no foreign key: a trace never holds back the
-- deletion of a queue, a partition or a segment, and outlives them until
-- the metrics window ages it out.
CREATE TABLE queen.message_traces (
    id             uuid PRIMARY KEY,
    partition_id   bigint NOT NULL,
    transaction_id text NOT NULL,
    consumer_group text NOT NULL,
    event_type     text NOT NULL,
    data           jsonb NOT NULL,
    worker_id      text,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX idx_message_traces_message ON queen.message_traces (partition_id, transaction_id, created_at);
-- The metrics purge walks traces oldest first.
CREATE INDEX idx_message_traces_created_at ON queen.message_traces (created_at);

-- The names a trace was filed under; the by-name read pages them oldest
-- first. created_at is the trace's, copied so a page is one index range.
CREATE TABLE queen.message_trace_names (
    trace_id   uuid NOT NULL REFERENCES queen.message_traces (id) ON DELETE CASCADE,
    trace_name text NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (trace_id, trace_name)
);
CREATE INDEX idx_message_trace_names_name ON queen.message_trace_names (trace_name, created_at);
