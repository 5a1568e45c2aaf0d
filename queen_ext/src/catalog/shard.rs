//! This database as one shard of several behind a PL/Proxy proxy
//! (docs/scale.md): shard `n` draws its partition ids and dead-letter ids
//! from `[n << SHARD_ID_BITS, (n + 1) << SHARD_ID_BITS)`.

use pgrx::prelude::*;
use queen_frames::route::SHARD_ID_BITS;
use serde_json::{json, Value};

use crate::pg::errors;

/// The identity columns whose ids a proxy routes by.
const ROUTED_IDS: [&str; 2] = ["queen.log_partitions", "queen.log_dlq"];

/// Makes this database shard `shard` (already checked to be in range): its
/// partition and dead-letter ids are drawn from the shard's range from now
/// on. Refused (55000) when the database already holds an id outside that
/// range. Answers the ranges.
pub fn set(shard: i32) -> Value {
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
    json!({"shard": shard, "ids": ranges})
}
