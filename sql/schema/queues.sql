-- queen: queue identity.
--
-- The defaults of the queue options live in Rust
-- (queen_ext/src/catalog/options.rs); the columns here carry none, so there
-- is one place that says what an omitted option means.

-- Queue identity: one row per queue, identity (tenant_id, name). Every
-- partition joins to its queue by id, never by name.
CREATE TABLE queen.queues (
    id                          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    tenant_id                   uuid NOT NULL DEFAULT '00000000-0000-0000-0000-000000000001',
    name                        text NOT NULL,
    namespace                   text,
    task                        text,
    priority                    integer NOT NULL,
    lease_time                  integer NOT NULL,   -- seconds
    retry_limit                 integer NOT NULL,
    retry_delay                 integer NOT NULL,   -- milliseconds
    dead_letter_queue           boolean NOT NULL,
    dlq_after_max_retries       boolean NOT NULL,
    delayed_processing          integer NOT NULL,   -- seconds
    window_buffer               integer NOT NULL,   -- seconds
    max_size                    integer NOT NULL,
    max_queue_size              integer NOT NULL,
    retention_enabled           boolean NOT NULL,
    retention_seconds           integer NOT NULL,
    completed_retention_seconds integer NOT NULL,
    max_wait_time_seconds       integer NOT NULL,
    dedup_window_seconds        integer NOT NULL,
    dlq_retention_seconds       integer NOT NULL,
    min_pop_wait_time           integer NOT NULL,   -- milliseconds
    encryption_enabled          boolean NOT NULL,
    created_at                  timestamptz NOT NULL DEFAULT now(),
    updated_at                  timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX queues_tenant_name_uk ON queen.queues (tenant_id, name);
CREATE INDEX idx_queues_namespace_task ON queen.queues (namespace, task);

-- Queue options of Queen's configure body that queen takes and answers back
-- without acting on them (ttl, retentionSinkHoldMaxSeconds, ...): the values
-- as the last configure left them, one object per queue, written only when
-- a configure names one. Their defaults live in Rust
-- (queen_ext/src/catalog/options.rs) as the other options' do.
CREATE TABLE queen.queue_kept_options (
    queue_id   bigint PRIMARY KEY REFERENCES queen.queues (id) ON DELETE CASCADE,
    options    jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
