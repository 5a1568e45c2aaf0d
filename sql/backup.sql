-- queen: what a logical backup (pg_dump) carries.
--
-- pg_dump writes the rows of an extension's tables only when the extension
-- marks them with pg_extension_config_dump: an unmarked table is restored
-- by CREATE EXTENSION as the install script leaves it, empty. Every table
-- that holds user state is marked here, in one place, and so is every
-- sequence whose position must go on after a restore (an identity column's
-- sequence is marked by itself: marking its table does not carry it).
-- The update script that introduced the marks repeats this list.
--
-- Not marked, so a restore starts them afresh:
--   maintenance_leases   the workers' cycle leases (rows the install seeds)
--   retention_backoff, retention_work, retention_work_done,
--   retention_failures   a cycle's working state (UNLOGGED)
--   kv_usage             the per-namespace rollup, recomputed by the sweeper
--   queue_lag_metrics, worker_metrics,
--   system_metrics       sampled history, sampled anew
--   ephemeral_state, ephemeral_tallies, ephemeral_partitions,
--   ephemeral_partition_states, ephemeral_messages, ephemeral_groups,
--   ephemeral_cursors, ephemeral_leases, ephemeral_seen,
--   ephemeral_retired    ephemeral messages and their state (UNLOGGED: a
--                        crash loses them too); ephemeral_queues, their
--                        declared configuration, is marked

-- Queues, their options and their consumer groups.
SELECT pg_catalog.pg_extension_config_dump('queen.queues', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('queen.queues', 'id'), '');
SELECT pg_catalog.pg_extension_config_dump('queen.queue_kept_options', '');
SELECT pg_catalog.pg_extension_config_dump('queen.consumer_groups', '');
-- The log: partitions, segments, the hash sidecar, cursors and their states
-- (leases included).
SELECT pg_catalog.pg_extension_config_dump('queen.log_partitions', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('queen.log_partitions', 'id'), '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_segments', '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_txns', '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_cursors', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('queen.log_cursors', 'id'), '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_cursor_states', '');
-- Dead letters and what retention has pruned of them.
SELECT pg_catalog.pg_extension_config_dump('queen.log_dlq', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('queen.log_dlq', 'id'), '');
SELECT pg_catalog.pg_extension_config_dump('queen.queue_terminal_rollups', '');
-- Messages deleted by hand, and traces.
SELECT pg_catalog.pg_extension_config_dump('queen.log_deleted', '');
SELECT pg_catalog.pg_extension_config_dump('queen.message_traces', '');
SELECT pg_catalog.pg_extension_config_dump('queen.message_trace_names', '');
-- What retention did.
SELECT pg_catalog.pg_extension_config_dump('queen.retention_history', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('queen.retention_history', 'id'), '');
-- Timers, and the ones that could not be fired (their claims and fires at
-- the end: the marks of a table are kept in the order they were made, and
-- an update appends).
SELECT pg_catalog.pg_extension_config_dump('queen.log_timers', '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_timers_failed', '');
SELECT pg_catalog.pg_extension_config_dump(pg_catalog.pg_get_serial_sequence('queen.log_timers_failed', 'id'), '');
-- KV (locks and semaphores live in it), its versions and quotas.
SELECT pg_catalog.pg_extension_config_dump('queen.kv', '');
SELECT pg_catalog.pg_extension_config_dump('queen.kv_version_seq', '');
SELECT pg_catalog.pg_extension_config_dump('queen.kv_quota', '');
-- Switches (pauses), and the ephemeral queues' declared configuration.
SELECT pg_catalog.pg_extension_config_dump('queen.system_state', '');
SELECT pg_catalog.pg_extension_config_dump('queen.ephemeral_queues', '');
SELECT pg_catalog.pg_extension_config_dump('queen.ephemeral_incarnation_seq', '');
-- The timers' claims and fires (0.10.0).
SELECT pg_catalog.pg_extension_config_dump('queen.log_timer_claims', '');
SELECT pg_catalog.pg_extension_config_dump('queen.log_timers_done', '');
-- Streaming queries and their state.
SELECT pg_catalog.pg_extension_config_dump('queen.stream_queries', '');
SELECT pg_catalog.pg_extension_config_dump('queen.stream_state', '');
