//! A database as one shard of several behind a PL/Proxy proxy
//! (docs/scale.md). Shard `n` draws its partition ids and dead-letter ids
//! from its own range, `[n << SHARD_ID_BITS, (n + 1) << SHARD_ID_BITS)`, so a
//! call that names only such an id (an ack, a message read, a dead-letter
//! replay) is routed by the proxy to the one shard that holds it, and no
//! two shards ever answer the same id.

use pgrx::prelude::*;
use serde_json::json;

use queen_frames::route::SHARD_ID_BITS;

use crate::pg::errors;
use crate::wire::datum::JsonOut;

/// Shards are numbered 0 to SHARD_MAX - 1: 2^40 ids per shard
/// (`SHARD_ID_BITS`), and ids stay below 2^53, exact in a JavaScript
/// number.
pub const SHARD_MAX: i32 = 1 << 12;

/// The identity columns whose ids a proxy routes by.
const ROUTED_IDS: [&str; 2] = ["queen.log_partitions", "queen.log_dlq"];

/// Makes this database shard `shard`: its partition and dead-letter ids
/// are drawn from the shard's range from now on. Refused (55000) when the
/// database already holds an id outside that range, which happens when a
/// database that was used alone is made any shard but 0. Safe to run again.
#[pg_extern]
fn shard_set(shard: i32) -> JsonOut {
    if !(0..SHARD_MAX).contains(&shard) {
        errors::invalid("shard", format!("must be from 0 to {}", SHARD_MAX - 1));
    }
    let low = i64::from(shard) << SHARD_ID_BITS;
    let high = (i64::from(shard + 1) << SHARD_ID_BITS) - 1;
    let mut ranges = serde_json::Map::new();
    for table in ROUTED_IDS {
        let (min, max) = Spi::get_two::<i64, i64>(&format!("SELECT min(id), max(id) FROM {table}"))
            .unwrap_or_else(|e| panic!("{table}: {e}"));
        if min.is_some_and(|m| m < low.max(1)) || max.is_some_and(|m| m > high) {
            errors::raise(
                "55000",
                format!(
                    "{table} holds ids outside shard {shard}'s range [{low}, {high}]: \
                     only an empty database, or one used alone as shard 0, can be made shard {shard}"
                ),
            );
        }
        // Never backwards: an id once drawn (a partition since deleted) is
        // not drawn again.
        let drawn = Spi::get_one::<i64>(&format!(
            "SELECT nextval(pg_catalog.pg_get_serial_sequence('{table}', 'id'))"
        ))
        .unwrap_or_else(|e| panic!("{table}: {e}"))
        .expect("nextval answers");
        if drawn > high {
            errors::raise(
                "55000",
                format!("{table} has drawn ids beyond shard {shard}'s range (up to {high})"),
            );
        }
        let next = drawn.max(low.max(1)).max(max.map_or(0, |m| m + 1));
        Spi::run(&format!(
            "ALTER TABLE {table} ALTER COLUMN id SET MINVALUE {min_value} SET MAXVALUE {high} SET START WITH {next} RESTART WITH {next}",
            min_value = low.max(1)
        ))
        .unwrap_or_else(|e| panic!("{table}: {e}"));
        ranges.insert(
            table.to_owned(),
            json!({"from": low.max(1), "to": high, "next": next}),
        );
    }
    JsonOut::of(&json!({"shard": shard, "ids": ranges}))
}
