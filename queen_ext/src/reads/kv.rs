//! Browsing the KV rows read-only, as Queen's console reads them: the
//! namespaces with their live keys, and a namespace's keys page by page in
//! byte order, with or without values (and with expired rows not yet
//! pruned, when asked).

use pgrx::spi::{SpiClient, SpiHeapTupleData};
use serde_json::{json, Value};

use crate::kv::ops::prefix_upper_bound;
use crate::kv::parse::{check_key, check_ns};
use crate::pg::settings;
use crate::pg::spi::{self, exec};
use crate::pg::time::micros_to_iso;
use crate::query;
use crate::wire::json::Obj;

/// Keys one page lists when the body names no limit.
pub const DEFAULT_PAGE_ROWS: i64 = 100;

/// `[{"namespace", "keys"}]`: every namespace holding a live key, by name.
pub fn namespaces(c: &mut SpiClient<'_>) -> Value {
    let rows: Vec<Value> = exec(c, query!("kv_browse_namespaces"), &[], &[])
        .map(|r| {
            json!({"namespace": spi::col::<String>(&r, "ns"), "keys": spi::col::<i64>(&r, "keys")})
        })
        .collect();
    Value::Array(rows)
}

/// A page of one namespace's keys: body `{"namespace", "prefix"?,
/// "after"? (exclusive), "limit"? (default [`DEFAULT_PAGE_ROWS`], clamped
/// to 1..`queen.kv_prefix_max_rows`), "keysOnly"?, "includeExpired"?}`;
/// answers `{"rows", "truncated", "nextAfter", "bytes"}`, the values'
/// bytes within `queen.kv_read_max_bytes` (the first row always comes).
pub fn list(c: &mut SpiClient<'_>, body: &Value) -> Value {
    let ask = Ask::of(body);
    let from = ask.from();
    let upper = ask.prefix.as_deref().and_then(prefix_upper_bound);
    let rows = exec(
        c,
        query!("kv_browse_page"),
        &[
            spi::TEXT,
            spi::TEXT,
            spi::TEXT,
            spi::TEXT,
            spi::INT8,
            spi::BOOL,
        ],
        &[
            ask.ns.as_str().into(),
            from.as_str().into(),
            upper.as_deref().into(),
            ask.prefix.as_deref().into(),
            (ask.limit + 1).into(),
            ask.include_expired.into(),
        ],
    );
    let mut budget = settings::kv_read_max_bytes();
    let (mut out, mut bytes, mut truncated) = (Vec::new(), 0i64, false);
    for r in rows {
        if out.len() as i64 == ask.limit {
            truncated = true;
            break;
        }
        let key: String = spi::col(&r, "key");
        let value: String = spi::col(&r, "value");
        let size = if ask.keys_only {
            key.len()
        } else {
            key.len() + value.len()
        } as i64;
        if size > budget && !out.is_empty() {
            truncated = true;
            break;
        }
        budget -= size;
        bytes += size;
        out.push(row(&r, key, &value, ask.keys_only));
    }
    let next_after = if truncated {
        out.last().map(|r| r["key"].clone())
    } else {
        None
    };
    json!({"rows": out, "truncated": truncated, "nextAfter": next_after, "bytes": bytes})
}

/// What a page of keys asks for: the namespace, the prefix, the key it
/// lists after, its size and what each row carries.
struct Ask {
    ns: String,
    prefix: Option<String>,
    after: Option<String>,
    limit: i64,
    keys_only: bool,
    include_expired: bool,
}

impl Ask {
    /// Reads the body, each field checked in turn.
    fn of(body: &Value) -> Ask {
        let o = Obj::new(body, "");
        let ns = check_ns("namespace", o.req_str("namespace"));
        let prefix = o
            .opt_str("prefix")
            .filter(|p| !p.is_empty())
            .map(|p| check_key("prefix", p));
        let after = o
            .opt_str("after")
            .filter(|a| !a.is_empty())
            .map(|a| check_key("after", a));
        let limit = o
            .opt_i64("limit")
            .unwrap_or(DEFAULT_PAGE_ROWS)
            .clamp(1, settings::kv_prefix_max_rows());
        Ask {
            ns,
            prefix,
            after,
            limit,
            keys_only: o.opt_bool("keysOnly").unwrap_or(false),
            include_expired: o.opt_bool("includeExpired").unwrap_or(false),
        }
    }

    /// The smallest key above `after` (keys hold no control characters),
    /// and not below the prefix.
    fn from(&self) -> String {
        match (&self.after, &self.prefix) {
            (Some(a), Some(p)) if a < p => p.clone(),
            (Some(a), _) => format!("{a}\u{1}"),
            (None, Some(p)) => p.clone(),
            (None, None) => String::new(),
        }
    }
}

/// One key's row of a page, with its value unless only keys are asked.
fn row(r: &SpiHeapTupleData<'_>, key: String, value: &str, keys_only: bool) -> Value {
    let expires = spi::opt::<i64>(r, "expires_us").map(micros_to_iso);
    let mut row = json!({
        "key": key,
        "version": spi::col::<i64>(r, "version"),
        "expiresAt": expires,
        "updatedAt": micros_to_iso(spi::col::<i64>(r, "updated_us")),
        "expired": spi::col::<bool>(r, "expired"),
    });
    if !keys_only {
        row["value"] = crate::wire::json::parse_value("value", value);
    }
    row
}
