//! Settings: every GUC of the extension, under the `queen.` prefix with the
//! unit in the name. Each is written once (its static, its definition in
//! the `register_*` function of its concern) and read by the rest of the
//! extension through one typed accessor.
//!
//! Unless its definition says otherwise a setting is `Suset`: the workers
//! read it from postgresql.conf (again on SIGHUP), and a superuser session
//! that drives a cycle from SQL may set it for itself.

use pgrx::guc::GucSetting;

mod commits;
mod ephemeral;
mod kv;
mod limits;
mod messages;
mod reads;
mod retention;
mod sweeper;
mod workers;

pub use commits::*;
pub use ephemeral::*;
pub use kv::*;
pub use limits::*;
pub use messages::*;
pub use reads::*;
pub use retention::*;
pub use sweeper::*;
pub use workers::*;

/// Sweeper workers that can be woken (the bound of queen.sweeper_workers).
pub const MAX_SWEEPERS: usize = 16;

/// Defines every setting; called once, from `_PG_init`.
pub fn register() {
    workers::register_workers();
    limits::register_limits();
    commits::register_commits();
    retention::register_retention();
    sweeper::register_sweeper();
    kv::register_kv();
    reads::register_reads();
    messages::register_messages();
    ephemeral::register_ephemeral();
    register_memory();
}

/// `queen.malloc_keep_bytes`: freed memory a backend keeps for its next
/// calls instead of giving its heap back after each (default 8 MB;
/// `queen_datum::memory`).
static MALLOC_KEEP_BYTES: GucSetting<i32> =
    GucSetting::<i32>::new(queen_datum::memory::DEFAULT_KEEP_BYTES);

fn register_memory() {
    queen_datum::memory::define(c"queen.malloc_keep_bytes", &MALLOC_KEEP_BYTES);
}
