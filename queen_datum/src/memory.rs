//! Freed memory a backend keeps for its next calls.
//!
//! glibc's malloc gives the top of its heap back to the system once more
//! than its trim threshold lies free there: 128 kB at first, raised only
//! after a block mapped on its own is freed. A backend whose calls each
//! build and free a few hundred kilobytes then gives its heap back at the
//! end of every call, and takes every page fault again on the next one
//! (through the proxy, a push of 100 messages spent a third of the proxy
//! backend's CPU in page faults and heap trims, `docs/scale.md`).
//!
//! [`define`] registers an extension's setting for it (`queen.malloc_keep_bytes`,
//! `queen_proxy.malloc_keep_bytes`). Its value is both the free heap a
//! backend keeps and the size from which a block is mapped on its own (at
//! most glibc's 32 MB). It applies when set, in the backend that sets it;
//! when the library is preloaded, the postmaster applies it and every
//! backend starts with it.

use std::ffi::{c_int, c_void, CStr};

use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::pg_guard;

/// The default: 8 MB kept.
pub const DEFAULT_KEEP_BYTES: i32 = 8 << 20;

/// glibc's own thresholds, which 0 sets back.
const GLIBC_DEFAULT: c_int = 128 << 10;

/// The largest block glibc maps on request (`HEAP_MAX_SIZE / 2` on 64 bits).
const MMAP_THRESHOLD_MAX: c_int = 32 << 20;

/// Keeps up to `bytes` of freed heap, and maps blocks of `bytes` and more
/// on their own; 0 sets glibc's thresholds back (128 kB).
pub fn keep(bytes: i32) {
    let trim = if bytes == 0 { GLIBC_DEFAULT } else { bytes };
    let mmap = trim.min(MMAP_THRESHOLD_MAX);
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets malloc's parameters, and both values are in
    // the ranges glibc accepts.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, trim);
        libc::mallopt(libc::M_MMAP_THRESHOLD, mmap);
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = (trim, mmap);
}

#[pg_guard]
unsafe extern "C-unwind" fn assign(value: c_int, _extra: *mut c_void) {
    keep(value);
}

/// Defines the setting `name` (bytes, `Suset`), applied as it is set.
pub fn define(name: &'static CStr, setting: &'static GucSetting<i32>) {
    // SAFETY: the assign hook is guarded against panics.
    unsafe {
        GucRegistry::define_int_guc_with_hooks(
            name,
            c"Freed memory a backend keeps for its next calls, in bytes.",
            c"Also the size from which malloc maps a block on its own (at most 32 MB). \
              0 sets glibc's thresholds back (128 kB): the backend then gives its heap \
              back after each large call and takes its page faults again on the next.",
            setting,
            0,
            i32::MAX,
            GucContext::Suset,
            GucFlags::UNIT_BYTE,
            None,
            Some(assign),
            None,
        );
    }
}
