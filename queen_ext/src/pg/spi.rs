//! SPI helpers: statements prepared once per backend and kept.
//!
//! Every hot statement is planned on first use and kept for the life of the
//! backend (SPI_keepplan); PostgreSQL's plan cache re-plans it after DDL.

use std::cell::RefCell;
use std::collections::HashMap;

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys::{self, PgBuiltInOids, PgOid};
use pgrx::spi::{OwnedPreparedStatement, SpiClient, SpiTupleTable};

thread_local! {
    static PLANS: RefCell<HashMap<&'static str, OwnedPreparedStatement>> = RefCell::new(HashMap::new());
}

pub const INT2: PgOid = PgOid::BuiltIn(PgBuiltInOids::INT2OID);
pub const INT4: PgOid = PgOid::BuiltIn(PgBuiltInOids::INT4OID);
pub const INT8: PgOid = PgOid::BuiltIn(PgBuiltInOids::INT8OID);
pub const TEXT: PgOid = PgOid::BuiltIn(PgBuiltInOids::TEXTOID);
pub const BOOL: PgOid = PgOid::BuiltIn(PgBuiltInOids::BOOLOID);
pub const BOOL_ARRAY: PgOid = PgOid::BuiltIn(PgBuiltInOids::BOOLARRAYOID);
pub const BYTEA: PgOid = PgOid::BuiltIn(PgBuiltInOids::BYTEAOID);
pub const UUID: PgOid = PgOid::BuiltIn(PgBuiltInOids::UUIDOID);
pub const INT8_ARRAY: PgOid = PgOid::BuiltIn(PgBuiltInOids::INT8ARRAYOID);
pub const TEXT_ARRAY: PgOid = PgOid::BuiltIn(PgBuiltInOids::TEXTARRAYOID);
pub const BYTEA_ARRAY: PgOid = PgOid::BuiltIn(PgBuiltInOids::BYTEAARRAYOID);
pub const INT4_ARRAY: PgOid = PgOid::BuiltIn(PgBuiltInOids::INT4ARRAYOID);
pub const JSONB: PgOid = PgOid::BuiltIn(PgBuiltInOids::JSONBOID);
pub const TIMESTAMPTZ: PgOid = PgOid::BuiltIn(PgBuiltInOids::TIMESTAMPTZOID);
pub const TIMESTAMPTZ_ARRAY: PgOid = PgOid::BuiltIn(PgBuiltInOids::TIMESTAMPTZARRAYOID);
pub const INT2_ARRAY: PgOid = PgOid::BuiltIn(PgBuiltInOids::INT2ARRAYOID);

/// Runs `sql` (a static statement text, also the cache key) with `args`,
/// whose types are `types`.
pub fn exec<'conn>(
    client: &mut SpiClient<'conn>,
    sql: &'static str,
    types: &[PgOid],
    args: &[DatumWithOid<'_>],
) -> SpiTupleTable<'conn> {
    debug_assert_eq!(types.len(), args.len(), "{sql}");
    let planned = PLANS.with(|plans| plans.borrow().contains_key(sql));
    if !planned {
        let stmt = client
            .prepare_mut(sql, types)
            .unwrap_or_else(|e| panic!("preparing {sql}: {e}"))
            .keep();
        PLANS.with(|plans| plans.borrow_mut().insert(sql, stmt));
    }
    PLANS.with(|plans| {
        let plans = plans.borrow();
        let stmt = plans.get(sql).expect("plan was just kept");
        client
            .update(stmt, None, args)
            .unwrap_or_else(|e| panic!("{e}"))
    })
}

/// Runs `f` with `plan_cache_mode` set to `mode`; the caller's own setting
/// is back in place when `f` returns or unwinds.
fn with_plan_mode<R>(mode: pg_sys::PlanCacheMode::Type, f: impl FnOnce() -> R) -> R {
    struct Restore(std::ffi::c_int);
    impl Drop for Restore {
        fn drop(&mut self) {
            unsafe { pg_sys::plan_cache_mode = self.0 }
        }
    }
    let _restore = Restore(unsafe { pg_sys::plan_cache_mode });
    unsafe { pg_sys::plan_cache_mode = mode as std::ffi::c_int };
    f()
}

/// Runs `f` with generic plans for every kept statement. The engine's
/// statements are short index probes whose best plan does not depend on the
/// parameter values; re-planning them for each call (what the automatic mode
/// keeps doing for array parameters) costs more than the statement itself.
pub fn generic_plans<R>(f: impl FnOnce() -> R) -> R {
    with_plan_mode(pg_sys::PlanCacheMode::PLAN_CACHE_MODE_FORCE_GENERIC_PLAN, f)
}

/// As `exec`, planned for these parameter values and the table as it is
/// now. For the sweepers' per-shard scans, whose best plan depends on how
/// many rows are due: a generic plan kept from when the table was empty
/// would scan it whole on every pass (2026-11-30: a 1000-row prune pass took
/// 600-800 ms in a worker against 6-20 ms planned afresh, and the KV churn
/// bench's expired rows grew without bound).
pub fn exec_custom<'conn>(
    client: &mut SpiClient<'conn>,
    sql: &'static str,
    types: &[PgOid],
    args: &[DatumWithOid<'_>],
) -> SpiTupleTable<'conn> {
    with_plan_mode(
        pg_sys::PlanCacheMode::PLAN_CACHE_MODE_FORCE_CUSTOM_PLAN,
        || exec(client, sql, types, args),
    )
}

/// Runs `f` on an SPI connection, with generic plans.
pub fn spi<R>(f: impl FnOnce(&mut SpiClient<'_>) -> R) -> R {
    generic_plans(|| pgrx::spi::Spi::connect_mut(f))
}

/// The epoch-microseconds form every query returns timestamps in.
pub fn micros_to_iso(us: i64) -> String {
    let secs = us.div_euclid(1_000_000);
    let millis = us.rem_euclid(1_000_000) / 1000;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Whether the current transaction may write (false on a hot standby).
pub fn in_recovery() -> bool {
    unsafe { pg_sys::RecoveryInProgress() }
}

#[cfg(test)]
mod tests {
    #[test]
    fn iso_dates() {
        assert_eq!(super::micros_to_iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            super::micros_to_iso(1_700_000_000_123_456),
            "2023-11-14T22:13:20.123Z"
        );
        assert_eq!(
            super::micros_to_iso(951_782_400_000_000),
            "2000-02-29T00:00:00.000Z"
        );
    }
}

/// The current statement's start, in microseconds since the Unix epoch.
pub fn statement_start_us() -> i64 {
    // PostgreSQL's timestamps count from 2000-01-01.
    (unsafe { pg_sys::GetCurrentStatementStartTimestamp() }) + 946_684_800_000_000
}
