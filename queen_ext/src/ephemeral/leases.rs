//! A group's leases on the messages it was handed. From 0.9.0 a lease is a
//! series of versions, newest last: a delivery (until its lease runs out),
//! a hand-back (`-infinity`: due again at once) and a settlement
//! (`infinity`: acknowledged, or dropped past the retry limit). Nothing is
//! updated or deleted on the message path; the retention cycle deletes the
//! settled leases and those below the partition's tail. Before 0.9.0 a
//! lease is a row, updated on a redelivery or a hand-back and deleted when
//! settled; this library still serves such a schema until it is updated.

use pgrx::spi::SpiClient;

use super::queue::leases_as_log;
use crate::pg::spi::{self, exec_keyed};

/// A lease that ran out or was handed back, found by a pop.
pub struct Due {
    pub seq: i64,
    /// Its newest version (0 on a schema before 0.9.0).
    pub ver: i32,
    pub attempts: i32,
    pub handed_back: bool,
    /// The message, if it is still stored.
    pub payload: Option<String>,
}

/// A lease to write: the message, the version it replaces (None: a first
/// delivery) and its attempts.
pub struct Lease {
    pub seq: i64,
    pub replaces: Option<i32>,
    pub attempts: i32,
}

/// Up to `want` leases of `group` in a partition that ran out or were
/// handed back, oldest message first; none below the tail.
pub fn due(
    c: &mut SpiClient<'_>,
    (inc, partition, group): (i64, &str, &str),
    want: i64,
    tail: i64,
) -> Vec<Due> {
    let sql = if leases_as_log() {
        crate::query!("ephemeral_lease_log_due")
    } else {
        crate::query!("ephemeral_leases_due")
    };
    exec_keyed(
        c,
        sql,
        &[spi::INT8, spi::TEXT, spi::TEXT, spi::INT8, spi::INT8],
        &[
            inc.into(),
            partition.into(),
            group.into(),
            want.into(),
            tail.into(),
        ],
    )
    .map(|r| Due {
        seq: spi::col(&r, "seq"),
        ver: spi::col(&r, "ver"),
        attempts: spi::col(&r, "attempts"),
        handed_back: spi::col(&r, "handed_back"),
        payload: spi::opt(&r, "payload"),
    })
    .collect()
}

fn unzip(items: &[Lease]) -> (Vec<i64>, Vec<i32>, Vec<i32>) {
    (
        items.iter().map(|l| l.seq).collect(),
        items
            .iter()
            .map(|l| l.replaces.map_or(0, |v| v + 1))
            .collect(),
        items.iter().map(|l| l.attempts).collect(),
    )
}

/// Inserts the next version of each lease of `items` by `sql`
/// (`ephemeral_lease_log_write` or `_end`), whose last parameter is `last`.
fn insert_versions(
    c: &mut SpiClient<'_>,
    sql: &'static str,
    (inc, partition, group): (i64, &str, &str),
    items: &[Lease],
    (last_type, last): (pgrx::pg_sys::PgOid, pgrx::datum::DatumWithOid<'_>),
) {
    let (seqs, vers, attempts) = unzip(items);
    exec_keyed(
        c,
        sql,
        &[
            spi::INT8,
            spi::TEXT,
            spi::TEXT,
            spi::INT8_ARRAY,
            spi::INT4_ARRAY,
            spi::INT4_ARRAY,
            last_type,
        ],
        &[
            inc.into(),
            partition.into(),
            group.into(),
            seqs.into(),
            vers.into(),
            attempts.into(),
            last,
        ],
    );
}

/// Leases `items` to `group` for `seconds`.
pub fn write(c: &mut SpiClient<'_>, key: (i64, &str, &str), items: &[Lease], seconds: i64) {
    if items.is_empty() {
        return;
    }
    if leases_as_log() {
        let sql = crate::query!("ephemeral_lease_log_write");
        insert_versions(c, sql, key, items, (spi::INT8, seconds.into()));
        return;
    }
    let (inc, partition, group) = key;
    let (seqs, _, attempts) = unzip(items);
    exec_keyed(
        c,
        crate::query!("ephemeral_leases_write"),
        &[
            spi::INT8,
            spi::TEXT,
            spi::TEXT,
            spi::INT8_ARRAY,
            spi::INT4_ARRAY,
            spi::INT8,
        ],
        &[
            inc.into(),
            partition.into(),
            group.into(),
            seqs.into(),
            attempts.into(),
            seconds.into(),
        ],
    );
}

/// Ends the leases `items` of `group`: settled (acknowledged, or dropped),
/// or, without `settled`, handed back (due again at once).
pub fn end(c: &mut SpiClient<'_>, key: (i64, &str, &str), items: &[Lease], settled: bool) {
    if items.is_empty() {
        return;
    }
    if leases_as_log() {
        let sql = crate::query!("ephemeral_lease_log_end");
        insert_versions(c, sql, key, items, (spi::BOOL, settled.into()));
        return;
    }
    let (inc, partition, group) = key;
    let seqs: Vec<i64> = items.iter().map(|l| l.seq).collect();
    let sql = if settled {
        crate::query!("ephemeral_leases_delete")
    } else {
        crate::query!("ephemeral_lease_hand_back")
    };
    exec_keyed(
        c,
        sql,
        &[spi::INT8, spi::TEXT, spi::TEXT, spi::INT8_ARRAY],
        &[inc.into(), partition.into(), group.into(), seqs.into()],
    );
}

/// The lease `group` holds on message `seq`, if any: (its newest version,
/// its attempts).
pub fn get(
    c: &mut SpiClient<'_>,
    (inc, partition, group): (i64, &str, &str),
    seq: i64,
) -> Option<(i32, i32)> {
    let sql = if leases_as_log() {
        crate::query!("ephemeral_lease_log_get")
    } else {
        crate::query!("ephemeral_lease_get")
    };
    exec_keyed(
        c,
        sql,
        &[spi::INT8, spi::TEXT, spi::TEXT, spi::INT8],
        &[inc.into(), partition.into(), group.into(), seq.into()],
    )
    .next()
    .map(|r| (spi::col(&r, "ver"), spi::col(&r, "attempts")))
}
