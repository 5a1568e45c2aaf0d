//! Calls on one shard, or on every shard, through the PL/Proxy functions of
//! schema `queen_remote` (sql/proxy/remote.sql); a shard's ERROR comes back
//! as the shard raised it (`errors::passed_on`).

use pgrx::datum::DatumWithOid;
use pgrx::spi::Spi;

use crate::errors::{self, Caught};

/// The one value `sql` answers (a call of a `queen_remote` function).
pub fn one<T: pgrx::FromDatum + pgrx::IntoDatum>(sql: &str, args: &[DatumWithOid<'_>]) -> Option<T> {
    errors::passed_on(|| {
        Spi::get_one_with_args::<T>(sql, args).unwrap_or_else(|e| panic!("{sql}: {e}"))
    })
}

/// As [`one`], the ERROR caught: for a request of a fused call, which fails
/// alone.
pub fn try_one<T: pgrx::FromDatum + pgrx::IntoDatum>(
    sql: &str,
    args: &[DatumWithOid<'_>],
) -> Result<Option<T>, Caught> {
    errors::catch(|| Spi::get_one_with_args::<T>(sql, args).unwrap_or_else(|e| panic!("{sql}: {e}")))
}

/// Every value `sql` answers (a `RUN ON ALL` function: one per shard).
pub fn all<T: pgrx::FromDatum + pgrx::IntoDatum>(sql: &str, args: &[DatumWithOid<'_>]) -> Vec<T> {
    errors::passed_on(|| {
        Spi::connect(|client| {
            client
                .select(sql, None, args)
                .unwrap_or_else(|e| panic!("{sql}: {e}"))
                .filter_map(|row| row.get::<T>(1).unwrap_or_else(|e| panic!("{sql}: {e}")))
                .collect()
        })
    })
}

/// A JSON answer as a value tree.
pub fn parse(what: &str, text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{what} answered JSON that does not parse: {e}"))
}
