//! SPI helpers: statements prepared once per backend and kept.
//!
//! Every hot statement is planned on first use and kept for the life of the
//! backend (SPI_keepplan); PostgreSQL's plan cache re-plans it after DDL.

use std::cell::RefCell;
use std::collections::HashMap;

use pgrx::datum::DatumWithOid;
use pgrx::pg_sys::{self, PgBuiltInOids, PgOid};
use pgrx::spi::{OwnedPreparedStatement, SpiClient, SpiHeapTupleData, SpiTupleTable};
use pgrx::{FromDatum, IntoDatum};

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
pub const UUID_ARRAY: PgOid = PgOid::BuiltIn(PgBuiltInOids::UUIDARRAYOID);

/// An id (int8) folded into the second half of a two-int4 advisory lock
/// key. A collision only makes two holders take turns, or a try fail.
pub fn advisory_id(id: i64) -> i32 {
    (id as u64 ^ (id as u64 >> 32)) as u32 as i32
}

/// Runs `sql` (a static statement text, also the cache key) with `args`,
/// whose types are `types`.
///
/// Kept plans are prepared as mutating, so every statement runs with a
/// snapshot of its own (what READ COMMITTED gives) whether it writes or
/// not; they run through `select`, which does not take a transaction id
/// up front as `update` does. A call that only reads (an empty pop, a
/// queue version, a status, a listing) then leaves its transaction without
/// one, and its commit writes no WAL.
///
/// Never compiled with JIT: the statements are short probes, and a plan
/// whose estimate grows (a table a held snapshot keeps from being pruned,
/// or a switch of `exec_without`, which prices what it turns off far above
/// any real cost) would be compiled and optimized at every run: a pop took
/// 200 ms in LLVM, 2026-12-06.
pub fn exec<'conn>(
    client: &mut SpiClient<'conn>,
    sql: &'static str,
    types: &[PgOid],
    args: &[DatumWithOid<'_>],
) -> SpiTupleTable<'conn> {
    with_planner(std::ptr::addr_of_mut!(pg_sys::jit_enabled), false, || {
        exec_jitless(client, sql, types, args)
    })
}

fn exec_jitless<'conn>(
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
            .select(stmt, None, args)
            .unwrap_or_else(|e| panic!("{e}"))
    })
}

/// Runs `f` with the planner setting at `var` set to `value`; the caller's
/// own value is back in place when `f` returns or unwinds.
fn with_planner<T: Copy, R>(var: *mut T, value: T, f: impl FnOnce() -> R) -> R {
    struct Restore<T: Copy>(*mut T, T);
    impl<T: Copy> Drop for Restore<T> {
        fn drop(&mut self) {
            unsafe { *self.0 = self.1 }
        }
    }
    let _restore = Restore(var, unsafe { *var });
    unsafe { *var = value };
    f()
}

/// Runs `f` with each of the planner's `enable_*` switches at `switches`
/// off; each is back as it was when `f` returns or unwinds.
fn without_scans<R>(switches: &[*mut bool], f: impl FnOnce() -> R) -> R {
    match switches.split_first() {
        None => f(),
        Some((&first, rest)) => with_planner(first, false, || without_scans(rest, f)),
    }
}

/// Runs `f` with `plan_cache_mode` set to `mode`.
fn with_plan_mode<R>(mode: pg_sys::PlanCacheMode::Type, f: impl FnOnce() -> R) -> R {
    with_planner(
        std::ptr::addr_of_mut!(pg_sys::plan_cache_mode),
        mode as std::ffi::c_int,
        f,
    )
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

/// As `exec`, planned with no sequential scan where an index serves. For
/// statements that probe a key for each row they find: while the probed
/// table holds few rows, a plan made from its statistics reads the whole
/// table once per row, and a plan is kept until the table is analyzed
/// again. Measured 2026-12-04 with `pgbench`, one client popping 10
/// messages with autoAck from a queue of 64 partitions (65 cursor rows):
/// 1 313 and 1 370 pops/s with the cursor table read per partition, 1 783
/// and 1 909 with the key probed.
pub fn exec_indexed<'conn>(
    client: &mut SpiClient<'conn>,
    sql: &'static str,
    types: &[PgOid],
    args: &[DatumWithOid<'_>],
) -> SpiTupleTable<'conn> {
    exec_without(
        client,
        sql,
        types,
        args,
        &[std::ptr::addr_of_mut!(pg_sys::enable_seqscan)],
    )
}

/// As `exec_indexed`, with no bitmap scan and no memoized probe either: for
/// a scan that stops at a limit (the pop's candidate scan), whose index
/// range must be read in order as rows are asked for, probing a key for
/// each. A bitmap scan reads the whole range first; a memoized probe is
/// never hit when each row probes its own key, and its cache cost a third
/// of a scan of 10 000 partitions (15 ms against 10.5 ms, 2026-12-04).
pub fn exec_in_order<'conn>(
    client: &mut SpiClient<'conn>,
    sql: &'static str,
    types: &[PgOid],
    args: &[DatumWithOid<'_>],
) -> SpiTupleTable<'conn> {
    exec_without(
        client,
        sql,
        types,
        args,
        &[
            std::ptr::addr_of_mut!(pg_sys::enable_seqscan),
            std::ptr::addr_of_mut!(pg_sys::enable_bitmapscan),
            std::ptr::addr_of_mut!(pg_sys::enable_memoize),
        ],
    )
}

/// As `exec_indexed`, joined by probing the inner side's key for each
/// outer row: no hash or merge join, and no memoized probe (each row probes
/// its own key). For a scan that must cost the rows it reads on its outer
/// side, whatever the inner table holds (a read of a whole queue, probing
/// each partition's cursor): a hash join read the cursor table's whole key
/// to find the group's cursors, every queue's. Left free, a kept plan's
/// shape is chosen once, from the statistics of the moment.
pub fn exec_probing<'conn>(
    client: &mut SpiClient<'conn>,
    sql: &'static str,
    types: &[PgOid],
    args: &[DatumWithOid<'_>],
) -> SpiTupleTable<'conn> {
    exec_without(
        client,
        sql,
        types,
        args,
        &[
            std::ptr::addr_of_mut!(pg_sys::enable_seqscan),
            std::ptr::addr_of_mut!(pg_sys::enable_hashjoin),
            std::ptr::addr_of_mut!(pg_sys::enable_mergejoin),
            std::ptr::addr_of_mut!(pg_sys::enable_memoize),
        ],
    )
}

/// `exec`, planned with neither a sequential scan, a bitmap scan, a sort,
/// nor a hash or merge join: every row found through its key, in the
/// key's order, each joined row probed by its own key. For the
/// ephemeral queues' statements, whose rows (messages, leases, versions)
/// are inserted and deleted at the rate of calls: a plan kept from the
/// statistics of a quiet moment scans the whole table, and under a
/// snapshot held open elsewhere every row it ever held (an ack's lease
/// delete read a table of 100 000 dead leases in full, 2026-12-06).
pub fn exec_keyed<'conn>(
    client: &mut SpiClient<'conn>,
    sql: &'static str,
    types: &[PgOid],
    args: &[DatumWithOid<'_>],
) -> SpiTupleTable<'conn> {
    exec_without(
        client,
        sql,
        types,
        args,
        &[
            std::ptr::addr_of_mut!(pg_sys::enable_seqscan),
            std::ptr::addr_of_mut!(pg_sys::enable_bitmapscan),
            std::ptr::addr_of_mut!(pg_sys::enable_sort),
            std::ptr::addr_of_mut!(pg_sys::enable_hashjoin),
            std::ptr::addr_of_mut!(pg_sys::enable_mergejoin),
        ],
    )
}

/// `exec`, planned with no sort: for a statement that reads a cursor's
/// newest state (`ORDER BY seq DESC LIMIT 1`), which must be the first
/// visible entry of a backward probe of the states' key. Sorted instead,
/// the probe reads every state of the cursor that a snapshot held open
/// elsewhere keeps from being pruned: a pop took 16 ms after eight minutes
/// of a held snapshot, its state read through a sort (2026-12-06).
pub fn exec_unsorted<'conn>(
    client: &mut SpiClient<'conn>,
    sql: &'static str,
    types: &[PgOid],
    args: &[DatumWithOid<'_>],
) -> SpiTupleTable<'conn> {
    exec_without(
        client,
        sql,
        types,
        args,
        &[std::ptr::addr_of_mut!(pg_sys::enable_sort)],
    )
}

/// `exec`, planned with the planner's `enable_*` switches at `switches`
/// off (the kept plan is made on the statement's first call).
fn exec_without<'conn>(
    client: &mut SpiClient<'conn>,
    sql: &'static str,
    types: &[PgOid],
    args: &[DatumWithOid<'_>],
    switches: &[*mut bool],
) -> SpiTupleTable<'conn> {
    without_scans(switches, || exec(client, sql, types, args))
}

/// Runs `f` on an SPI connection, with generic plans.
pub fn spi<R>(f: impl FnOnce(&mut SpiClient<'_>) -> R) -> R {
    generic_plans(|| pgrx::spi::Spi::connect_mut(f))
}

/// Whether the table `queen.<name>` exists: two catalogue-cache probes, no
/// statement. For code that must also serve a schema an update has not yet
/// brought to this library's version.
pub fn queen_table_exists(name: &std::ffi::CStr) -> bool {
    queen_table_oid(name).is_some()
}

/// The oid of the table `queen.<name>`, if it exists (as
/// [`queen_table_exists`]: no statement).
pub fn queen_table_oid(name: &std::ffi::CStr) -> Option<pg_sys::Oid> {
    let oid = unsafe {
        let ns = pg_sys::get_namespace_oid(c"queen".as_ptr(), true);
        if ns == pg_sys::InvalidOid {
            return None;
        }
        pg_sys::get_relname_relid(name.as_ptr(), ns)
    };
    (oid != pg_sys::InvalidOid).then_some(oid)
}

/// Whether the table `queen.<table>` has the column `column` (catalogue-cache
/// probes, no statement), for code that must also serve an older schema.
pub fn queen_column_exists(table: &std::ffi::CStr, column: &std::ffi::CStr) -> bool {
    queen_table_oid(table)
        .is_some_and(|oid| unsafe { pg_sys::get_attnum(oid, column.as_ptr()) } > 0)
}

/// Whether the current transaction may write (false on a hot standby).
pub fn in_recovery() -> bool {
    unsafe { pg_sys::RecoveryInProgress() }
}

/// The text of the statement kept in `sql/queries/<name>.sql`, one whole
/// statement per file: a `&'static str`, so it keys the plan cache as an
/// inline literal would.
#[macro_export]
macro_rules! query {
    ($name:literal) => {
        include_str!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../sql/queries/",
            $name,
            ".sql"
        ))
    };
}

/// Column `name` of `row`, which the statement never answers NULL.
pub fn col<T: IntoDatum + FromDatum>(row: &SpiHeapTupleData<'_>, name: &str) -> T {
    opt(row, name).unwrap_or_else(|| panic!("column {name} is NULL"))
}

/// Column `name` of `row`; None for NULL.
pub fn opt<T: IntoDatum + FromDatum>(row: &SpiHeapTupleData<'_>, name: &str) -> Option<T> {
    row.get_by_name(name)
        .unwrap_or_else(|e| panic!("column {name}: {e}"))
}
