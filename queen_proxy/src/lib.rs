//! queen_proxy: the queen SQL API in a proxy database that holds no queue
//! data, each call made on the shard (an ordinary queen database) that owns
//! its queue, namespace or id, with PL/Proxy (docs/scale.md).
//!
//! Calls routed by one argument are PL/Proxy functions (sql/proxy/
//! routed.sql). Calls whose key is inside a body (pushes, acks,
//! transactions, streaming queries), that ask every shard (renewals, namespace pops, the
//! global readers) or that are fused are here: they split, route and merge,
//! through the one-shard and all-shard functions of `queen_remote`
//! (sql/proxy/remote.sql).

use pgrx::guc::GucSetting;
use pgrx::prelude::*;

pub mod ack;
pub mod admin;
pub mod bodies;
pub mod errors;
pub mod fused;
pub mod global;
pub mod pop;
pub mod push;
pub mod remote;
pub mod rights;
pub mod route;
pub mod series;
pub mod streams;
pub mod txn;

::pgrx::pg_module_magic!(name, version);

extension_sql_file!(
    "../../sql/proxy/bootstrap.sql",
    name = "bootstrap",
    bootstrap
);
extension_sql_file!(
    "../../sql/proxy/remote.sql",
    name = "remote",
    requires = ["bootstrap"]
);
extension_sql_file!("../../sql/proxy/routed.sql", name = "routed", finalize);

/// The calls the proxy's own functions make on one shard, and the rights'
/// applier; the schema itself is created by sql/proxy/bootstrap.sql.
#[pg_schema]
mod queen_remote {}

/// `queen_proxy.malloc_keep_bytes`: freed memory a proxy backend keeps for
/// its next calls (default 8 MB; `queen_datum::memory`). Its own prefix, so
/// that it does not clash with `queen`'s when both libraries are loaded.
static MALLOC_KEEP_BYTES: GucSetting<i32> =
    GucSetting::<i32>::new(queen_datum::memory::DEFAULT_KEEP_BYTES);

/// `queen_proxy.decompress_max_bytes`: bytes a compressed binary push body
/// may decompress to while the proxy reads it for its queues (default
/// 16 MiB, at least 1 KiB); a shard then holds it to `queen.decompress_max_bytes`.
static DECOMPRESS_MAX_BYTES: GucSetting<i32> = GucSetting::<i32>::new(16 * 1024 * 1024);

/// What a compressed binary push body may decompress to in the proxy
/// (`queen_proxy.decompress_max_bytes`).
pub fn decompress_max_bytes() -> usize {
    DECOMPRESS_MAX_BYTES.get() as usize
}

#[pg_guard]
pub extern "C-unwind" fn _PG_init() {
    queen_datum::memory::define(c"queen_proxy.malloc_keep_bytes", &MALLOC_KEEP_BYTES);
    pgrx::guc::GucRegistry::define_int_guc(
        c"queen_proxy.decompress_max_bytes",
        c"Bytes a compressed binary push body may decompress to in the proxy.",
        c"A larger one is refused (22P03) before it reaches a shard.",
        &DECOMPRESS_MAX_BYTES,
        1024,
        i32::MAX,
        pgrx::guc::GucContext::Suset,
        pgrx::guc::GucFlags::default(),
    );
    route::register_invalidation();
}
