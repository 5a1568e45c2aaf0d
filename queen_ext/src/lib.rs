//! queen: a partitioned message log inside PostgreSQL.
//!
//! The public SQL API (schema `queen`) takes and answers JSON shaped like
//! Queen's HTTP bodies, so a front-end passes requests through untouched.

use pgrx::prelude::*;

pub mod api;
pub mod catalog;
pub mod engine;
pub mod ephemeral;
pub mod kv;
pub mod maintenance;
pub mod pg;
pub mod reads;
pub mod streams;
pub mod timers;
pub mod wire;

::pgrx::pg_module_magic!(name, version);

// The schema, by concern: the bootstrap first, then each file after what
// it references.
extension_sql_file!(
    "../../sql/schema/bootstrap.sql",
    name = "bootstrap",
    bootstrap
);
extension_sql_file!(
    "../../sql/schema/queues.sql",
    name = "queues",
    requires = ["bootstrap"]
);
extension_sql_file!(
    "../../sql/schema/log.sql",
    name = "log",
    requires = ["queues"]
);
extension_sql_file!(
    "../../sql/schema/consumers.sql",
    name = "consumers",
    requires = ["log"]
);
extension_sql_file!("../../sql/schema/dlq.sql", name = "dlq", requires = ["log"]);
extension_sql_file!(
    "../../sql/schema/messages.sql",
    name = "messages",
    requires = ["log"]
);
extension_sql_file!(
    "../../sql/schema/maintenance.sql",
    name = "maintenance",
    requires = ["log"]
);
extension_sql_file!(
    "../../sql/schema/timers.sql",
    name = "timers",
    requires = ["queues"]
);
extension_sql_file!(
    "../../sql/schema/kv.sql",
    name = "kv",
    requires = ["bootstrap"]
);
extension_sql_file!(
    "../../sql/schema/switches.sql",
    name = "switches",
    requires = ["bootstrap"]
);
extension_sql_file!(
    "../../sql/schema/ephemeral.sql",
    name = "ephemeral",
    requires = ["bootstrap"]
);
extension_sql_file!(
    "../../sql/schema/streams.sql",
    name = "streams",
    requires = ["bootstrap"]
);
extension_sql_file!(
    "../../sql/schema/metrics.sql",
    name = "metrics",
    requires = ["maintenance", "queues"]
);
extension_sql_file!(
    "../../sql/retention.sql",
    name = "retention_sql",
    requires = ["log", "consumers", "dlq", "streams"]
);
extension_sql_file!(
    "../../sql/backup.sql",
    name = "backup",
    requires = [
        "queues",
        "log",
        "consumers",
        "dlq",
        "messages",
        "maintenance",
        "timers",
        "kv",
        "switches",
        "ephemeral",
        "streams"
    ]
);
extension_sql_file!("../../sql/privileges.sql", name = "privileges", finalize);

/// The maintenance steps, cycles and their SQL helpers: apart from the public
/// API, callable by `queen_admin` only (sql/privileges.sql). The functions
/// name it in their `#[pg_extern(schema = ...)]`; the schema itself is
/// created by sql/schema/bootstrap.sql.
#[pg_schema]
mod queen_internal {}

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    pg::settings::register();
    if pg::shmem::preloading() {
        timers::wake::init_shmem();
        timers::floors::init_shmem();
        maintenance::sweeper::metrics::init_shmem();
        catalog::switches::init_shmem();
        engine::counters::init_shmem();
        catalog::ends::init_shmem();
        catalog::replaced::init_shmem();
        pg::shmem::mark_preloaded();
    }
    // pg_upgrade starts both servers in binary-upgrade mode, while it
    // copies the schema: no worker may touch a database then.
    if !unsafe { pgrx::pg_sys::IsBinaryUpgrade } {
        maintenance::retention::worker::register();
        maintenance::sweeper::worker::register();
    }
}

#[cfg(any(test, feature = "pg_test"))]
mod tests;

/// Required by `cargo pgrx test`.
#[cfg(test)]
pub mod pg_test {
    pub fn setup(_options: Vec<&str>) {}

    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec!["shared_preload_libraries = 'queen'"]
    }
}
