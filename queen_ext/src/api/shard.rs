//! A database as one shard of several behind a PL/Proxy proxy
//! (docs/scale.md). Shard `n` draws its partition ids and dead-letter ids
//! from its own range, `[n << SHARD_ID_BITS, (n + 1) << SHARD_ID_BITS)`, so a
//! call that names only such an id (an ack, a message read, a dead-letter
//! replay) is routed by the proxy to the one shard that holds it, and no
//! two shards ever answer the same id.

use pgrx::prelude::*;

use crate::pg::errors;
use crate::wire::datum::JsonOut;

/// Shards are numbered 0 to SHARD_MAX - 1: 2^40 ids per shard
/// (`SHARD_ID_BITS`), and ids stay below 2^53, exact in a JavaScript
/// number.
pub const SHARD_MAX: i32 = 1 << 12;

/// Makes this database shard `shard`: its partition and dead-letter ids
/// are drawn from the shard's range from now on. Refused (55000) when the
/// database already holds an id outside that range, which happens when a
/// database that was used alone is made any shard but 0. Safe to run again.
#[pg_extern]
fn shard_set(shard: i32) -> JsonOut {
    if !(0..SHARD_MAX).contains(&shard) {
        errors::invalid("shard", format!("must be from 0 to {}", SHARD_MAX - 1));
    }
    JsonOut::of(&crate::catalog::shard::set(shard))
}
