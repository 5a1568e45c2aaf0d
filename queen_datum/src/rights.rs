//! Who may call what: the one list of the SQL API's functions by the role
//! that may call them, for both extensions (`queen` and `queen_proxy`).
//!
//! Each role is a NOLOGIN group role for one use; login roles are granted
//! the roles they need (docs/security.md):
//!
//! - `queen_app`: the message path, KV, locks, timers, streaming queries
//!   and every read;
//! - `queen_operator`: the changes an operator (or the HTTP front-end) makes:
//!   configuring and deleting queues, dead-letter retry and delete,
//!   consumer-group administration, the switches;
//! - `queen_admin`: both of those, the few calls below that are its alone,
//!   and the maintenance schema `queen_internal`;
//! - `pg_monitor` (PostgreSQL's own): the readers a monitoring system calls.
//!
//! [`ensure_roles`] makes the group roles; [`grant`] applies the list to
//! the functions of a schema that exist there (a proxy has fewer functions
//! than a shard, and a few of its own), after taking these roles' rights on
//! that schema's functions away, so a database created or updated to a
//! version has exactly that version's rights; [`mark_deprecated`] describes
//! the deprecated names.

use pgrx::prelude::*;

/// The message path, KV, locks, timers, streaming queries and the reads a
/// monitoring role is not given: `queen_app` (which also has [`READERS`]).
const APP: &[&str] = &[
    // The message path.
    "push",
    "push_text",
    "push_binary",
    "pop",
    "pop_frames",
    "queue_version",
    "ack",
    "ack_text",
    "renew_lease",
    "push_fused",
    "ack_fused",
    "renew_fused",
    "transaction",
    "transaction_binary",
    "fetch",
    "partitions_changed",
    "ephemeral_push",
    "ephemeral_pop",
    "ephemeral_ack",
    "trace_record",
    // KV, locks, timers.
    "kv",
    "kv_get",
    "kv_set",
    "kv_cas",
    "kv_delete",
    "kv_incr",
    "locks",
    "timers",
    "timer_schedule",
    "timer_cancel",
    // Streaming queries.
    "stream_register",
    "stream_state_get",
    "stream_cycle",
    // Reads of queues, messages, groups, dead letters, KV and timers.
    "get_queue",
    "messages_list",
    "message_get",
    "traces_for_message",
    "traces_by_name",
    "trace_names",
    "dlq_messages",
    "dlq_list",
    "get_dlq_message",
    "dlq_message_get",
    "consumer_group_get",
    "consumer_group_detail",
    "consumer_group_positions",
    "kv_namespaces",
    "kv_list",
    "timer_peek",
    "timers_list",
];

/// The readers a monitoring role may call (`pg_monitor`), and an
/// application too.
const READERS: &[&str] = &[
    "list_queues",
    "queues_list",
    "queue_get",
    "queue_counts",
    "resource_queues",
    "resource_queue",
    "resource_namespaces",
    "resource_tasks",
    "queue_depth",
    "partition_backlog",
    "consumer_groups_list",
    "consumer_groups_summary",
    "consumer_groups_lagging",
    "kv_usage",
    "ephemeral_queues",
    "ephemeral_depth",
    "stream_queries",
    "overview",
    "system_overview",
    "status",
    "status_queues",
    "status_queue",
    "status_analytics",
    "system_metrics_series",
    "worker_metrics_series",
    "queue_lag",
    "queue_ops",
    "retention_series",
    "retention_explain",
    "retention_timeseries",
    "metrics_summary",
    "stats_refresh",
    "table_sizes",
    "sweeper_metrics",
    "maintenance_status",
    "rights",
    "shards",
    "route_queue",
    "route_namespace",
    "route_partition",
    "route_dlq",
    "queue_slot",
];

/// The changes an operator, or the HTTP front-end on a user's behalf, makes.
const OPERATOR: &[&str] = &[
    "configure",
    "delete_queue",
    "queue_delete",
    "delete_queue_if_exists",
    "message_delete",
    "retry_dlq_message",
    "delete_dlq_message",
    "dlq_message_delete",
    "dlq_replay",
    "dlq_retry_message",
    "dlq_purge",
    "consumer_group_delete",
    "consumer_group_drop",
    "consumer_group_seek",
    "consumer_group_seek_queue",
    "consumer_group_seek_partition",
    "consumer_group_subscription",
    "consumer_group_set_timestamp",
    "ephemeral_configure",
    "ephemeral_reset",
    "ephemeral_delete",
    "stream_delete",
    "system_switches",
    "front_metrics_report",
];

/// The calls of `queen_admin` alone: bulk retries, quotas, setting timers
/// aside, and a shard's id range.
const ADMIN: &[&str] = &[
    "dlq_retry_queue",
    "retry_failed_by_queue",
    "kv_quota",
    "timers_set_aside",
    "shard_set",
];

/// The names kept for one version after the operation got one name: each
/// with the function that answers in its place. A deprecated name keeps
/// its rights; its description in the catalogue (`\df+`, `COMMENT ON
/// FUNCTION`) says what to call instead.
pub const DEPRECATED: &[(&str, &str)] = &[
    ("consumer_group_drop", "consumer_group_delete"),
    ("dlq_messages", "dlq_list"),
    ("delete_queue_if_exists", "queue_delete"),
    ("delete_queue", "queue_delete"),
    ("get_queue", "queue_get"),
    ("list_queues", "queues_list"),
    ("get_dlq_message", "dlq_message_get"),
    ("delete_dlq_message", "dlq_message_delete"),
    (
        "consumer_group_set_timestamp",
        "consumer_group_subscription",
    ),
    ("consumer_group_seek_queue", "consumer_group_seek"),
    ("consumer_groups_summary", "consumer_groups_list"),
    ("consumer_group_detail", "consumer_group_get"),
    ("retry_failed_by_queue", "dlq_retry_queue"),
    ("retry_dlq_message", "dlq_retry_message"),
    ("system_overview", "overview"),
    ("resource_queue", "queue_get"),
    ("status_queue", "queue_get"),
    ("resource_queues", "queues_list"),
    ("status_queues", "queues_list"),
    ("retention_timeseries", "retention_series"),
];

/// Each role of `$1` with the functions of schema `queen` it may call, as
/// the database grants them (what `queen.rights()` reads).
pub const GRANTED: &str = "SELECT r.rolname::text AS role,
        array_agg(DISTINCT p.proname::text ORDER BY p.proname::text) AS functions
   FROM pg_catalog.pg_roles r CROSS JOIN pg_catalog.pg_proc p
  WHERE r.rolname = ANY ($1) AND p.pronamespace = 'queen'::pg_catalog.regnamespace
    AND pg_catalog.has_function_privilege(r.oid, p.oid, 'EXECUTE')
  GROUP BY r.rolname ORDER BY r.rolname";

/// The functions of schema `queen` described as deprecated, with their
/// description.
pub const DEPRECATED_NOW: &str = "SELECT DISTINCT p.proname::text AS name,
        pg_catalog.obj_description(p.oid, 'pg_proc') AS note
   FROM pg_catalog.pg_proc p
  WHERE p.pronamespace = 'queen'::pg_catalog.regnamespace
    AND pg_catalog.obj_description(p.oid, 'pg_proc') LIKE 'deprecated:%'
  ORDER BY 1";

/// The version that removes the names of [`DEPRECATED`].
pub const DEPRECATED_UNTIL: &str = "0.14.0";

/// Each role with the lists of functions it may call.
pub const ROLES: &[(&str, &[&[&str]])] = &[
    ("queen_app", &[APP, READERS]),
    ("pg_monitor", &[READERS]),
    ("queen_operator", &[OPERATOR]),
    ("queen_admin", &[ADMIN]),
];

/// The group roles the extensions make (NOLOGIN), and which of them each
/// is granted, in the order they are made.
pub const GROUPS: &[(&str, &[&str])] = &[
    ("queen_app", &[]),
    ("queen_operator", &[]),
    ("queen_admin", &["queen_app", "queen_operator"]),
];

/// Makes the group roles of [`GROUPS`] that are missing, NOLOGIN, and
/// grants each the roles it holds. A role of these names made beforehand
/// that can log in (or is a superuser) would receive every right: refused
/// (42501).
pub fn ensure_roles(origin: &'static str) {
    let names: Vec<String> = GROUPS.iter().map(|(r, _)| (*r).to_owned()).collect();
    let unsafe_role = Spi::get_one_with_args::<String>(
        "SELECT min(rolname::text) FROM pg_catalog.pg_roles
          WHERE rolname = ANY ($1) AND (rolcanlogin OR rolsuper)",
        &[names.into()],
    )
    .unwrap_or_else(|e| error!("{e}"));
    if let Some(role) = unsafe_role {
        crate::errors::Caught {
            hint: Some(
                "they must be NOLOGIN group roles; grant them to login roles instead".to_owned(),
            ),
            ..crate::errors::Caught::new("42501", format!("role {role} exists and can log in"))
        }
        .raise(origin);
    }
    for (role, members_of) in GROUPS {
        let exists = Spi::get_one_with_args::<bool>(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = $1)",
            &[(*role).into()],
        )
        .unwrap_or_else(|e| error!("{e}"));
        if exists != Some(true) {
            run(&format!("CREATE ROLE {} NOLOGIN", ident(role)));
        }
        for of in *members_of {
            run(&format!("GRANT {} TO {}", ident(of), ident(role)));
        }
    }
}

/// Gives every role of [`ROLES`] exactly its rights on the functions of
/// `schema` (a function named there that `schema` does not hold is passed
/// by), after taking these roles' rights on `schema`'s functions away.
pub fn grant(schema: &str) {
    let roles: Vec<String> = ROLES.iter().map(|(role, _)| ident(role)).collect();
    run(&format!(
        "REVOKE EXECUTE ON ALL FUNCTIONS IN SCHEMA {} FROM {}",
        ident(schema),
        roles.join(", ")
    ));
    for (role, lists) in ROLES {
        let names: Vec<String> = lists
            .iter()
            .flat_map(|l| l.iter().map(|n| (*n).to_owned()))
            .collect();
        let list = Spi::get_one_with_args::<String>(
            "SELECT string_agg(p.oid::pg_catalog.regprocedure::text, ', ' ORDER BY p.oid)
               FROM pg_catalog.pg_proc p
              WHERE p.pronamespace = $1::text::pg_catalog.regnamespace AND p.proname = ANY ($2)",
            &[schema.into(), names.into()],
        )
        .unwrap_or_else(|e| error!("{e}"));
        if let Some(list) = list {
            run(&format!(
                "GRANT EXECUTE ON FUNCTION {list} TO {}",
                ident(role)
            ));
        }
    }
}

/// Describes every function of `schema` named in [`DEPRECATED`] as
/// deprecated, naming the function to call instead.
pub fn mark_deprecated(schema: &str) {
    for (old, new) in DEPRECATED {
        let names = vec![(*old).to_owned()];
        let list = Spi::get_one_with_args::<Vec<String>>(
            "SELECT array_agg(p.oid::pg_catalog.regprocedure::text ORDER BY p.oid)
               FROM pg_catalog.pg_proc p
              WHERE p.pronamespace = $1::text::pg_catalog.regnamespace AND p.proname = ANY ($2)",
            &[schema.into(), names.into()],
        )
        .unwrap_or_else(|e| error!("{e}"));
        for f in list.unwrap_or_default() {
            let text =
                format!("deprecated: call {schema}.{new} instead; removed in {DEPRECATED_UNTIL}");
            run(&format!(
                "COMMENT ON FUNCTION {f} IS '{}'",
                text.replace('\'', "''")
            ));
        }
    }
}

/// Runs one statement of [`ensure_roles`] or [`grant`].
fn run(sql: &str) {
    Spi::run(sql).unwrap_or_else(|e| error!("{e}"));
}

/// `name` as a quoted SQL identifier.
fn ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}
