//! What the benches read of the cluster itself rather than of queen: how
//! many transactions its database has run, to tell what a workload (or an
//! idle one) costs it.

use postgres::Client;

/// SQL answering the transactions (committed or rolled back) the current
/// database has run since its statistics were reset, as one int8.
pub const TRANSACTIONS: &str = "SELECT xact_commit + xact_rollback FROM pg_stat_database \
                                WHERE datname = current_database()";

/// The transactions the current database has run so far ([`TRANSACTIONS`]).
pub fn transactions(c: &mut Client) -> i64 {
    c.query_one(TRANSACTIONS, &[]).unwrap().get(0)
}
