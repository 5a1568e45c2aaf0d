//! The sweepers' two slow KV phases, each on its own gate: the usage rollup
//! (`queen.kv_usage_every_ms`) and the prune of expired rows
//! (`queen.kv_expire_every_ms`, at most `queen.kv_expire_batch` rows per
//! pass). Reads never depend on either: kv_live_v1 hides an expired row
//! from its instant on. The prune deletes under SKIP LOCKED, so it never
//! waits on a row a transaction holds, and counts the expired-but-present
//! rows on every pass, deleting or not: an unpruned table looks healthy
//! while its heap grows.

use std::collections::BTreeMap;

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::pg::spi::{self, exec, exec_custom};
use crate::query;

/// One prune pass from `start_shard` on: deletes at most `batch` expired
/// rows, then counts those still present (up to `count_max`).
pub fn expire_step(c: &mut SpiClient<'_>, start_shard: i32, batch: i32, count_max: i32) -> Value {
    let deleted = expire(c, start_shard, batch);
    let (present, capped) = expired_present(c, count_max);
    json!({"deleted": deleted, "expiredPresent": present, "countCapped": capped})
}

/// Deletes at most `batch` expired rows nobody holds; answers how many.
pub fn expire(c: &mut SpiClient<'_>, start_shard: i32, batch: i32) -> i64 {
    let deleted = exec_custom(
        c,
        query!("kv_prune_expire"),
        &[spi::INT4, spi::INT4],
        &[start_shard.into(), batch.into()],
    )
    .len() as i64;
    deleted
}

/// The expired rows still present, counted up to about `count_max` (64
/// bounded per-shard index scans); and whether the count hit its cap.
pub fn expired_present(c: &mut SpiClient<'_>, count_max: i32) -> (i64, bool) {
    let per_shard = (count_max / crate::catalog::SHARDS).max(1);
    let present: i64 = exec_custom(
        c,
        query!("kv_prune_expired_present"),
        &[spi::INT4],
        &[per_shard.into()],
    )
    .first()
    .get_by_name("present")
    .unwrap()
    .unwrap();
    (
        present,
        present >= (per_shard as i64) * crate::catalog::SHARDS as i64,
    )
}

/// Per-namespace live keys and bytes, gathered in keyset pages of `batch`
/// rows, each its own statement, then written to queen.kv_usage (namespaces
/// with nothing live are removed). `page` runs one statement; the worker
/// gives each its own transaction.
pub struct Rollup {
    after: Option<(String, String)>,
    pub usage: BTreeMap<String, (i64, i64, i64)>,
    pub done: bool,
}

impl Rollup {
    pub fn new() -> Rollup {
        Rollup {
            after: None,
            usage: BTreeMap::new(),
            done: false,
        }
    }

    pub fn page(&mut self, c: &mut SpiClient<'_>, batch: i32) {
        let (ns, key) = self.after.clone().unwrap_or_default();
        let rows: Vec<(String, i64, i64, i64, String, String)> = exec(
            c,
            query!("kv_prune_page"),
            &[spi::TEXT, spi::TEXT, spi::INT4],
            &[ns.into(), key.into(), batch.into()],
        )
        .map(|r| {
            (
                spi::col(&r, "ns"),
                spi::col(&r, "keys"),
                spi::col(&r, "bytes"),
                spi::col(&r, "expired"),
                spi::col(&r, "last_ns"),
                spi::col(&r, "last_key"),
            )
        })
        .collect();
        let Some(last) = rows.first().map(|r| (r.4.clone(), r.5.clone())) else {
            self.done = true;
            return;
        };
        for (ns, keys, bytes, expired, _, _) in rows {
            let e = self.usage.entry(ns).or_default();
            e.0 += keys;
            e.1 += bytes;
            e.2 += expired;
        }
        self.after = Some(last);
    }

    /// Writes what was gathered; answers the totals.
    pub fn write(&self, c: &mut SpiClient<'_>) -> Value {
        let ns: Vec<&str> = self.usage.keys().map(String::as_str).collect();
        let keys: Vec<i64> = self.usage.values().map(|u| u.0).collect();
        let bytes: Vec<i64> = self.usage.values().map(|u| u.1).collect();
        let expired: Vec<i64> = self.usage.values().map(|u| u.2).collect();
        exec(
            c,
            query!("kv_prune_write"),
            &[
                spi::TEXT_ARRAY,
                spi::INT8_ARRAY,
                spi::INT8_ARRAY,
                spi::INT8_ARRAY,
            ],
            &[
                ns.into(),
                keys.clone().into(),
                bytes.clone().into(),
                expired.into(),
            ],
        );
        json!({
            "namespaces": self.usage.len(),
            "keys": keys.iter().sum::<i64>(),
            "bytes": bytes.iter().sum::<i64>(),
        })
    }
}

impl Default for Rollup {
    fn default() -> Self {
        Rollup::new()
    }
}
