//! Whether the library was preloaded: only then do the shared areas (the
//! sweepers' wake and metrics) exist.

use std::sync::atomic::{AtomicBool, Ordering};

/// Set in the postmaster when the library is preloaded (and inherited by
/// every backend).
static PRELOADED: AtomicBool = AtomicBool::new(false);

/// True while `shared_preload_libraries` is being processed.
pub fn preloading() -> bool {
    unsafe { pgrx::pg_sys::process_shared_preload_libraries_in_progress }
}

/// Records that the shared areas were requested.
pub fn mark_preloaded() {
    PRELOADED.store(true, Ordering::SeqCst);
}

/// Whether the shared areas exist in this process.
pub fn preloaded() -> bool {
    PRELOADED.load(Ordering::SeqCst)
}
