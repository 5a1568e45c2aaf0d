-- queen: streaming queries and their state.

-- A streaming query, registered by name: the fingerprint of its operator
-- chain (config_hash) and the queues it reads and writes (as the
-- registration named them; nothing checks them later). The id is what
-- every later call names.
CREATE TABLE queen.stream_queries (
    id           uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    name         text COLLATE "C" NOT NULL UNIQUE,
    source_queue text NOT NULL,
    sink_queue   text,
    config_hash  text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now()
);

-- A query's state, per source partition and key: a JSON value the client's
-- operators read back (open windows, watermarks). A partition id, not a
-- foreign key: deleting a queue deletes its partitions' state explicitly.
CREATE TABLE queen.stream_state (
    query_id     uuid NOT NULL REFERENCES queen.stream_queries (id) ON DELETE CASCADE,
    partition_id bigint NOT NULL,
    key          text COLLATE "C" NOT NULL,
    value        jsonb NOT NULL,
    updated_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (query_id, partition_id, key)
) WITH (
    -- Windows open and close all the time; truncation's ACCESS EXCLUSIVE
    -- would stall every cycle.
    vacuum_truncate = off,
    autovacuum_vacuum_scale_factor = 0.05
);
-- A queue's deletion finds its partitions' state.
CREATE INDEX idx_stream_state_partition ON queen.stream_state (partition_id);
