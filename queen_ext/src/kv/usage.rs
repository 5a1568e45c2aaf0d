//! Per-namespace usage as the last rollup counted it, and the quotas.

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::pg::spi::{self, exec};
use crate::query;

/// Each namespace's usage and quota (one namespace, or all).
pub fn usage(c: &mut SpiClient<'_>, ns: Option<&str>) -> Vec<Value> {
    exec(c, query!("kv_usage"), &[spi::TEXT], &[ns.into()])
        .map(|r| {
            json!({
                "ns": spi::opt::<String>(&r, "ns"),
                "keys": spi::opt::<i64>(&r, "keys"),
                "bytes": spi::opt::<i64>(&r, "bytes"),
                "expiredPresent": spi::opt::<i64>(&r, "expired_present"),
                "rolledUpAt": spi::opt::<String>(&r, "rolled_up_at"),
                "maxKeys": spi::opt::<i64>(&r, "max_keys"),
                "maxBytes": spi::opt::<i64>(&r, "max_bytes"),
            })
        })
        .collect()
}

/// Sets a namespace's quota (None: no limit of that kind); both None
/// removes it.
pub fn set_quota(c: &mut SpiClient<'_>, ns: &str, max_keys: Option<i64>, max_bytes: Option<i64>) {
    exec(
        c,
        query!("kv_quota"),
        &[spi::TEXT, spi::INT8, spi::INT8],
        &[ns.into(), max_keys.into(), max_bytes.into()],
    );
}
