//! A consumer group's cursor on a partition (`queen.log_cursors`) and its
//! states (`queen.log_cursor_states`). A state is never updated nor deleted
//! by the message path: a pop, an ack, a renewal or a seek locks the
//! cursor's newest state and inserts the next one (seq + 1, which the
//! primary key lets only one transaction write). A lock granted after
//! another transaction replaced the state is granted on the replaced one:
//! an ack checks, in a statement of its own, that it holds the newest
//! before it works on it; a pop finds out when its write finds seq + 1
//! taken, and passes the partition by; a renewal and a seek do both in
//! one statement and make it again. The
//! retention cycle deletes the replaced states in bulk, once a snapshot
//! held open elsewhere no longer keeps its last deletions from being
//! reclaimed (`maintenance::retention::compact`). The newest state is the
//! first entry of a backward probe of (cursor_id, seq), whatever lies
//! below it (docs/architecture.md, "MVCC"). `queen.log_consumers` is the
//! view every reader reads: each cursor with its newest state.

use pgrx::spi::SpiClient;

use crate::catalog::{ends, replaced};
use crate::pg::errors;
use crate::pg::spi;
use crate::query;

/// Whether the schema keeps cursors as states (0.5.0 on). A database not
/// yet updated keeps them as rows of the table `queen.log_consumers`,
/// updated in place: this library serves it with the statements of
/// `sql/queries/cursor_rows/`, as the version before did.
pub fn as_states() -> bool {
    spi::queen_table_exists(c"log_cursors")
}

/// Runs `states` on a schema that keeps cursors as states, else `rows`
/// (the same parameters), planned with no sort: a cursor's newest state is
/// the first visible entry of a backward probe (`spi::exec_unsorted`).
pub fn exec<'conn>(
    client: &mut SpiClient<'conn>,
    [states, rows]: [&'static str; 2],
    types: &[pgrx::pg_sys::PgOid],
    args: &[pgrx::datum::DatumWithOid<'_>],
) -> pgrx::spi::SpiTupleTable<'conn> {
    let sql = if as_states() { states } else { rows };
    spi::exec_unsorted(client, sql, types, args)
}

/// Where a cursor's next state goes: on a schema that keeps states, the
/// key of the newest state the transaction holds locked (read by the
/// statement that locked it, columns `cursor_id` and `state_seq`); on one
/// not yet updated, the row of (partition, group), updated in place.
#[derive(Clone, Copy, Debug)]
pub enum Held {
    State { cursor_id: i64, seq: i64 },
    Row,
}

impl Held {
    /// The held state `row` names, or [`Held::Row`] when it names none.
    pub fn of(row: &pgrx::spi::SpiHeapTupleData<'_>) -> Self {
        match (spi::opt(row, "cursor_id"), spi::opt(row, "state_seq")) {
            (Some(cursor_id), Some(seq)) => Held::State { cursor_id, seq },
            _ => Held::Row,
        }
    }
}

/// Whether the state `held`, which this transaction has just locked, was
/// replaced by a transaction that committed after the locking statement's
/// snapshot was taken (the lock was then granted on a state that is no
/// longer the newest): the caller locks again, in a statement whose
/// snapshot sees the replacement. Never on a schema that keeps rows.
pub fn replaced_since(client: &mut SpiClient<'_>, held: Held) -> bool {
    let Held::State { cursor_id, seq } = held else {
        return false;
    };
    spi::exec(
        client,
        query!("cursor_state_replaced"),
        &[spi::INT8, spi::INT8],
        &[cursor_id.into(), seq.into()],
    )
    .next()
    .map(|r| spi::col::<bool>(&r, "replaced"))
    .unwrap_or(false)
}

/// Follows the cursor state `held` of group `group` on partition `pid` by
/// the one `states` selects from it (a whole statement such as
/// `pop_lease_cursor.sql` or `ack_settle_advance.sql`), or on a schema not
/// yet updated runs `rows` on the row of (`pid`, `group`): `$1` and `$2` are
/// the held state's key or that row's, `types` and `args` the parameters
/// from `$3` on. The held state must have been found the newest after it
/// was locked ([`replaced_since`]); a follower already there answers 40001.
pub fn replace(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
    held: Held,
    sql: [&'static str; 2],
    types: &[pgrx::pg_sys::PgOid],
    args: Vec<pgrx::datum::DatumWithOid<'_>>,
) {
    if !try_replace(client, pid, group, held, sql, types, args) {
        let Held::State { cursor_id, .. } = held else {
            unreachable!("a row is always written")
        };
        errors::retry_needed(format!(
            "the state of cursor {cursor_id} was replaced by another transaction; retry"
        ));
    }
}

/// [`replace`] for a held state that may have been replaced since it was
/// locked: false when a follower is already there (nothing is written; in
/// REPEATABLE READ PostgreSQL answers 40001 instead).
#[must_use]
pub fn try_replace(
    client: &mut SpiClient<'_>,
    pid: i64,
    group: &str,
    held: Held,
    [states, rows]: [&'static str; 2],
    types: &[pgrx::pg_sys::PgOid],
    args: Vec<pgrx::datum::DatumWithOid<'_>>,
) -> bool {
    let (sql, key_types, key): (
        _,
        [pgrx::pg_sys::PgOid; 2],
        [pgrx::datum::DatumWithOid<'_>; 2],
    ) = match held {
        Held::State { cursor_id, seq } => (
            states,
            [spi::INT8, spi::INT8],
            [cursor_id.into(), seq.into()],
        ),
        Held::Row => (rows, [spi::INT8, spi::TEXT], [pid.into(), group.into()]),
    };
    let all_types: Vec<_> = key_types.iter().chain(types).copied().collect();
    let all_args: Vec<_> = key.into_iter().chain(args).collect();
    let written = spi::exec(client, sql, &all_types, &all_args).len();
    match held {
        Held::State { cursor_id, .. } if written > 0 => {
            replaced::note(cursor_id);
            true
        }
        Held::State { .. } => false,
        Held::Row => true,
    }
}

/// How many times a statement that lost a cursor's state to another
/// transaction (the state was replaced, or deleted by the retention cycle,
/// while this one waited for its lock) is made again before the call is
/// answered to retry (40001). Each round
/// waits for the transaction that holds the state; one that replaces the
/// same state this often in between is not expected (not measured).
pub const STATE_ROUNDS: usize = 16;

/// Makes `statement` (whose rows count what it did) again until a run
/// does nothing, at most [`STATE_ROUNDS`] times; answers the rows of all
/// runs. `what` names the call for the retry error.
pub fn until_settled(mut statement: impl FnMut() -> usize, what: &str) -> usize {
    let mut total = 0;
    for _ in 0..STATE_ROUNDS {
        let n = statement();
        if n == 0 {
            return total;
        }
        total += n;
    }
    errors::retry_needed(format!(
        "{what}: cursor states kept changing under it; retry"
    ))
}

/// Deletes the states of the cursors `ids` (deleted by the caller, or about
/// to go with their partitions): a transaction that holds one is waited
/// for, and the state it put in its place is deleted by the next round.
pub fn delete_states(client: &mut SpiClient<'_>, ids: &[i64]) {
    if ids.is_empty() || !as_states() {
        return;
    }
    until_settled(
        || {
            spi::exec(
                client,
                query!("cursor_states_delete"),
                &[spi::INT8_ARRAY],
                &[ids.to_vec().into()],
            )
            .len()
        },
        "deleting cursors",
    );
}

/// Deletes the states of every cursor on the partitions `pids` (which the
/// caller holds locked and is about to delete: their cursors go with them),
/// and forgets their end bounds.
pub fn delete_states_of_partitions(client: &mut SpiClient<'_>, pids: &[i64]) {
    ends::cursors_moved_back();
    ends::forget(pids);
    if !as_states() {
        return;
    }
    let ids: Vec<i64> = spi::exec(
        client,
        query!("cursor_ids_of_partitions"),
        &[spi::INT8_ARRAY],
        &[pids.to_vec().into()],
    )
    .map(|r| spi::col::<i64>(&r, "id"))
    .collect();
    delete_states(client, &ids);
}

/// Whether group `group` has a cursor on partition `pid`.
pub fn exists(client: &mut SpiClient<'_>, pid: i64, group: &str) -> bool {
    spi::exec(
        client,
        query!("cursor_exists"),
        &[spi::INT8, spi::TEXT],
        &[pid.into(), group.into()],
    )
    .next()
    .is_some()
}
