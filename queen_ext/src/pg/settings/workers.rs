//! The background workers.

use std::ffi::CString;

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};

/// `queen.database_name`: the database the background workers connect to
/// (default `postgres`; read at server start only).
static DATABASE_NAME: GucSetting<Option<CString>> =
    GucSetting::<Option<CString>>::new(Some(c"postgres"));
/// `queen.workers_enabled`: whether the background workers do any work
/// (default on); they still need shared_preload_libraries.
static WORKERS_ENABLED: GucSetting<bool> = GucSetting::<bool>::new(true);
/// `queen.maintenance_lease_ms`: how long a claimed maintenance lease lasts,
/// in milliseconds (default 60 s, at least 1 s); a dead holder stalls its
/// task at most this long.
static MAINTENANCE_LEASE_MS: GucSetting<i32> = GucSetting::<i32>::new(60_000);

pub(super) fn register_workers() {
    GucRegistry::define_string_guc(
        c"queen.database_name",
        c"Database the queen background workers connect to.",
        c"The workers wait quietly until the extension is created there.",
        &DATABASE_NAME,
        GucContext::Postmaster,
        GucFlags::default(),
    );
    GucRegistry::define_bool_guc(
        c"queen.workers_enabled",
        c"Whether the maintenance background workers do any work.",
        c"Everything they do can also be driven from SQL.",
        &WORKERS_ENABLED,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"queen.maintenance_lease_ms",
        c"Lease of a claimed maintenance task, in milliseconds.",
        c"",
        &MAINTENANCE_LEASE_MS,
        1000,
        i32::MAX,
        GucContext::Suset,
        GucFlags::default(),
    );
}

/// The database the workers connect to (`queen.database_name`; `postgres`
/// when it is unset).
pub fn database_name() -> String {
    DATABASE_NAME
        .get()
        .map(|c| c.to_string_lossy().into_owned())
        .unwrap_or_else(|| "postgres".into())
}

/// Whether the background workers do their work (`queen.workers_enabled`).
pub fn workers_enabled() -> bool {
    WORKERS_ENABLED.get()
}

/// A maintenance lease, in milliseconds (`queen.maintenance_lease_ms`).
pub fn maintenance_lease_ms() -> i64 {
    MAINTENANCE_LEASE_MS.get() as i64
}
