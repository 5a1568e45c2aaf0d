//! queen: a partitioned message log inside PostgreSQL.
//!
//! The public SQL API (schema `queen`) takes and answers JSON shaped like
//! Queen's HTTP bodies, so a front-end passes requests through untouched.

use pgrx::prelude::*;

pub mod api;
pub mod catalog;
pub mod engine;
pub mod kv;
pub mod maintenance;
pub mod pg;
pub mod timers;
pub mod wire;

::pgrx::pg_module_magic!(name, version);

extension_sql_file!("../../sql/schema.sql", name = "schema", bootstrap);
extension_sql_file!(
    "../../sql/retention.sql",
    name = "retention_sql",
    requires = ["schema"]
);
extension_sql_file!("../../sql/privileges.sql", name = "privileges", finalize);

/// The maintenance steps, cycles and their SQL helpers: apart from the public
/// API, callable by `queen_admin` only (sql/privileges.sql). The functions
/// name it in their `#[pg_extern(schema = ...)]`; the schema itself is
/// created by sql/schema.sql.
#[pg_schema]
mod queen_internal {}

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    pg::settings::register();
    if pg::shmem::preloading() {
        timers::wake::init_shmem();
        maintenance::sweeper::metrics::init_shmem();
        pg::shmem::mark_preloaded();
    }
    maintenance::retention::worker::register();
    maintenance::sweeper::worker::register();
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
