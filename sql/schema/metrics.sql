-- queen: the metrics series, one row per minute: per queue and consumer
-- group, per producer of server-wide figures, and of the database itself.
-- Written by the metrics task (queen.metrics_interval_ms), read by the
-- status and analytics functions, trimmed after queen.metrics_retention_days
-- by the retention cycle's metrics purge.

-- Per (minute, queue, consumer group). The push counts and the transaction
-- count belong to the queue, not to a group: they are on the row whose
-- consumer_group is ''. Lag is what a pop saw: the age of each popped batch's
-- oldest message at the pop (lag_sum_ms / lag_count is the mean).
CREATE TABLE queen.queue_lag_metrics (
    bucket_time        timestamptz NOT NULL,
    queue_id           bigint NOT NULL REFERENCES queen.queues (id) ON DELETE CASCADE,
    consumer_group     text NOT NULL,
    push_request_count bigint NOT NULL DEFAULT 0,
    push_message_count bigint NOT NULL DEFAULT 0,
    pop_request_count  bigint NOT NULL DEFAULT 0,
    pop_message_count  bigint NOT NULL DEFAULT 0,
    pop_empty_count    bigint NOT NULL DEFAULT 0,
    ack_request_count  bigint NOT NULL DEFAULT 0,
    ack_success_count  bigint NOT NULL DEFAULT 0,
    ack_failed_count   bigint NOT NULL DEFAULT 0,
    dlq_count          bigint NOT NULL DEFAULT 0,
    transaction_count  bigint NOT NULL DEFAULT 0,
    lag_count          bigint NOT NULL DEFAULT 0,
    lag_sum_ms         bigint NOT NULL DEFAULT 0,
    max_lag_ms         bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (bucket_time, queue_id, consumer_group)
);
CREATE INDEX idx_queue_lag_metrics_queue ON queen.queue_lag_metrics (queue_id, bucket_time);

-- Per (minute, producer of figures): the server-wide totals. worker_id
-- 'queen_ext' is the extension's metrics task (every backend's counts).
CREATE TABLE queen.worker_metrics (
    bucket_time        timestamptz NOT NULL,
    hostname           text NOT NULL,
    worker_id          text NOT NULL,
    pid                integer NOT NULL,
    push_request_count bigint NOT NULL DEFAULT 0,
    push_message_count bigint NOT NULL DEFAULT 0,
    pop_request_count  bigint NOT NULL DEFAULT 0,
    pop_message_count  bigint NOT NULL DEFAULT 0,
    pop_empty_count    bigint NOT NULL DEFAULT 0,
    ack_request_count  bigint NOT NULL DEFAULT 0,
    ack_success_count  bigint NOT NULL DEFAULT 0,
    ack_failed_count   bigint NOT NULL DEFAULT 0,
    dlq_count          bigint NOT NULL DEFAULT 0,
    transaction_count  bigint NOT NULL DEFAULT 0,
    lag_count          bigint NOT NULL DEFAULT 0,
    lag_sum_ms         bigint NOT NULL DEFAULT 0,
    max_lag_ms         bigint NOT NULL DEFAULT 0,
    db_connections     integer NOT NULL DEFAULT 0,
    PRIMARY KEY (bucket_time, hostname, worker_id)
);

-- Per (minute, database server): what the database itself reports. The
-- rates are per second since the previous sample of the same server.
CREATE TABLE queen.system_metrics (
    bucket_time          timestamptz NOT NULL,
    hostname             text NOT NULL,
    port                 integer NOT NULL,
    worker_id            text NOT NULL,
    sample_count         integer NOT NULL DEFAULT 1,
    sampled_at           timestamptz NOT NULL,
    connections          integer NOT NULL,
    connections_active   integer NOT NULL,
    connections_idle     integer NOT NULL,
    max_connections      integer NOT NULL,
    database_size_bytes  bigint NOT NULL,
    xact_commit          bigint NOT NULL,
    xact_rollback        bigint NOT NULL,
    wal_bytes            bigint,
    commits_per_second   double precision,
    rollbacks_per_second double precision,
    wal_bytes_per_second double precision,
    PRIMARY KEY (bucket_time, hostname, port, worker_id)
);

INSERT INTO queen.maintenance_leases (task) VALUES ('metrics') ON CONFLICT (task) DO NOTHING;
