//! Routing: which shard owns a queue, a KV namespace or an id, by the
//! hash of `queen_frames::route` and the proxy's slot map.

use pgrx::pg_sys;
use pgrx::prelude::*;
use pgrx::spi::Spi;
use queen_frames::route::{slot_of, SHARD_ID_BITS, SLOTS};

use crate::errors;

/// The slot map: `shards[slot]`, and how many shards there are.
#[derive(Clone)]
pub struct Router {
    shards: std::rc::Rc<Vec<i32>>,
    count: i32,
}

thread_local! {
    /// The slot map as last read by this backend. It changes only with the
    /// server `queen` (`queen.shard_add` alters it in the same
    /// transaction), whose invalidation empties this.
    static CACHED: std::cell::RefCell<Option<Router>> = const { std::cell::RefCell::new(None) };
}

/// Empties the cached slot map; a syscache callback on foreign servers.
unsafe extern "C-unwind" fn forget(_arg: pg_sys::Datum, _cache: std::ffi::c_int, _hash: u32) {
    CACHED.with(|c| c.borrow_mut().take());
}

/// Registers [`forget`] (once per backend, from `_PG_init`).
pub fn register_invalidation() {
    unsafe {
        pg_sys::CacheRegisterSyscacheCallback(
            pg_sys::SysCacheIdentifier::FOREIGNSERVEROID as std::ffi::c_int,
            Some(forget),
            pg_sys::Datum::from(0usize),
        );
    }
}

impl Router {
    /// The slot map, read once and kept until the server changes.
    pub fn load() -> Router {
        if let Some(r) = CACHED.with(|c| c.borrow().clone()) {
            return r;
        }
        let r = Router::read();
        CACHED.with(|c| *c.borrow_mut() = Some(r.clone()));
        r
    }

    fn read() -> Router {
        // A read (`select`): the proxy's transaction takes no transaction
        // id for it.
        let (shards, count) = Spi::connect(|c| {
            c.select(
                "SELECT (SELECT pg_catalog.array_agg(shard ORDER BY slot) FROM queen.proxy_slots), \
                        (SELECT pg_catalog.count(*) FROM queen.proxy_shards)",
                Some(1),
                &[],
            )?
            .first()
            .get_two::<Vec<i32>, i64>()
        })
        .unwrap_or_else(|e| panic!("reading the slot map: {e}"));
        let shards = shards.unwrap_or_default();
        if shards.len() != SLOTS as usize {
            errors::raise(
                "55000",
                "the proxy has no shards yet: add them with queen.shard_add(dsn)",
            );
        }
        Router {
            shards: std::rc::Rc::new(shards),
            count: count.unwrap_or(0) as i32,
        }
    }

    /// The shard of a queue or namespace.
    pub fn name(&self, name: &str) -> i32 {
        self.shards[slot_of(name) as usize]
    }

    /// The shard of a partition or dead-letter id; `field` names it in the
    /// refusal of an id no shard gave.
    pub fn id(&self, field: &str, id: i64) -> i32 {
        let shard = id >> SHARD_ID_BITS;
        if id <= 0 || shard >= i64::from(self.count) {
            errors::raise(
                "22023",
                format!("{field}: {id} is not an id any shard of this proxy gave"),
            );
        }
        shard as i32
    }

    /// Every shard, in order.
    pub fn all(&self) -> std::ops::Range<i32> {
        0..self.count
    }
}

/// The slot of a name, for an operator (which shard it lives on is
/// `queen.route_queue`).
#[pg_extern(immutable, parallel_safe)]
fn queue_slot(name: &str) -> i32 {
    slot_of(name)
}

/// The shard that owns a queue: the `RUN ON` of every call routed by queue.
#[pg_extern(stable)]
fn route_queue(queue: Option<&str>) -> i32 {
    let queue = queue.unwrap_or_else(|| errors::raise("22023", "queue: is required"));
    Router::load().name(queue)
}

/// The shard that owns a KV namespace (the same hash as queues: a namespace
/// and the queues of the same shard key live together).
#[pg_extern(stable)]
fn route_namespace(ns: Option<&str>) -> i32 {
    let ns = ns.unwrap_or_else(|| errors::raise("22023", "ns: is required"));
    Router::load().name(ns)
}

/// The shard that gave a partition id.
#[pg_extern(stable)]
fn route_partition(partition_id: Option<i64>) -> i32 {
    let id = partition_id.unwrap_or_else(|| errors::raise("22023", "partition_id: is required"));
    Router::load().id("partition_id", id)
}

/// The shard that gave a dead-letter id.
#[pg_extern(stable)]
fn route_dlq(id: Option<i64>) -> i32 {
    let id = id.unwrap_or_else(|| errors::raise("22023", "id: is required"));
    Router::load().id("id", id)
}

/// An id a body names (a `partitionId`, say): a number or a numeric string.
pub fn id_in(v: Option<&serde_json::Value>) -> Option<i64> {
    match v? {
        serde_json::Value::Number(n) => n.as_i64(),
        serde_json::Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// The one shard of `shards` when they are all the same (shard 0 for
/// none); None when they name several.
pub fn single(shards: &[i32]) -> Option<i32> {
    match shards.split_first() {
        None => Some(0),
        Some((first, rest)) => rest.iter().all(|s| s == first).then_some(*first),
    }
}

/// The indexes of items by their shard (`shards[k]` is item k's), each
/// shard's in order.
pub fn by_shard(shards: &[i32]) -> std::collections::BTreeMap<i32, Vec<usize>> {
    let mut parts: std::collections::BTreeMap<i32, Vec<usize>> = Default::default();
    for (k, shard) in shards.iter().enumerate() {
        parts.entry(*shard).or_default().push(k);
    }
    parts
}
