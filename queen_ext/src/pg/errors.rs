//! Raising ERRORs with a fitting SQLSTATE and a message naming the problem.

use pgrx::prelude::*;
use std::fmt::Display;

pub use queen_datum::errors::{sqlstate_code, sqlstate_text};

/// A value is missing, out of range or not one of the allowed ones (22023).
pub fn invalid(field: &str, msg: impl Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
        format!("{field}: {msg}")
    );
}

/// A JSON value has the wrong type (42804).
pub fn wrong_type(field: &str, want: &str) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_DATATYPE_MISMATCH,
        format!("{field}: must be {want}")
    );
}

/// A name or id is longer than the engine keeps (22001).
pub fn too_long(field: &str, len: usize, max: usize) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_STRING_DATA_RIGHT_TRUNCATION,
        format!("{field}: {len} bytes is longer than the {max} allowed")
    );
}

/// Text that should be a UUID is not one (22P02).
pub fn bad_uuid(field: &str, value: &str) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_INVALID_TEXT_REPRESENTATION,
        format!("{field}: {value:?} is not a valid UUID")
    );
}

/// A queue (or other named object) that must exist does not (42704).
pub fn undefined(what: &str, name: &str) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_UNDEFINED_OBJECT,
        format!("{what} {name:?} does not exist")
    );
}

/// Bytes that are not a valid frame or wire body (22P03).
pub fn bad_binary(what: &str, msg: impl Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_INVALID_BINARY_REPRESENTATION,
        format!("{what}: {msg}")
    );
}

/// The calling transaction's isolation level does not allow the call (25000).
pub fn wrong_isolation(msg: impl Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_INVALID_TRANSACTION_STATE,
        format!("{msg}")
    );
}

/// A concurrent change the caller should retry over (40001).
pub fn retry_needed(msg: impl Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_T_R_SERIALIZATION_FAILURE,
        format!("{msg}")
    );
}

/// A lease that is not (or no longer) the caller's (55000: object not in prerequisite state).
pub fn lease_not_held(msg: impl Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE,
        format!("{msg}")
    );
}

/// A surface an operator paused (57000: operator intervention); the
/// detail is the surface's key (`push`, `kv`, `timers_schedule`), for
/// callers that answer each surface in its own words.
pub fn paused(surface: &str, msg: impl Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_OPERATOR_INTERVENTION,
        format!("{msg}"),
        surface
    );
}

/// An internal invariant failed: data in the tables is not what the engine wrote.
pub fn corrupt(msg: impl Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_DATA_CORRUPTED,
        format!("{msg}")
    );
}

/// A request larger than a configured bound allows (54000).
pub fn program_limit(field: &str, msg: impl Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_PROGRAM_LIMIT_EXCEEDED,
        format!("{field}: {msg}")
    );
}

/// Raises again an error caught earlier, with its own SQLSTATE (five
/// characters, as `sqlstate_text` writes them).
pub fn raise(sqlstate: &str, msg: impl Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::from(sqlstate_code(sqlstate)),
        format!("{msg}")
    );
}

/// The SQLSTATE and message of an ERROR caught by a `PgTryBuilder`.
pub fn describe(e: &pg_sys::panic::CaughtError) -> (String, String) {
    let caught = queen_datum::errors::Caught::of(e);
    (caught.sqlstate, caught.message)
}

/// A write that would take a namespace past its quota (53400).
pub fn quota_exceeded(msg: impl Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_CONFIGURATION_LIMIT_EXCEEDED,
        format!("storage_quota_exceeded: {msg}")
    );
}

/// An ephemeral queue at its bounds under the policy `reject` (53000:
/// insufficient resources); the front-end answers 429 `queue_full`.
pub fn queue_full(msg: impl Display) -> ! {
    ereport!(
        ERROR,
        PgSqlErrorCode::ERRCODE_INSUFFICIENT_RESOURCES,
        format!("queue_full: {msg}")
    );
}

#[cfg(test)]
mod tests {
    #[test]
    fn sqlstates_pack_as_postgres_packs_them() {
        for state in ["40001", "57P01", "22023", "XX000", "08006"] {
            let code = pgrx::pg_sys::errcodes::PgSqlErrorCode::from(super::sqlstate_code(state));
            assert_eq!(super::sqlstate_text(code), state);
        }
    }
}
