//! Subtransactions: running a piece of work so that an ERROR in it undoes
//! only that piece and comes back as a value, with its SQLSTATE, message and
//! detail, while the caller's transaction carries on. Shared with the proxy
//! extension (`queen_datum::errors`).

pub use queen_datum::errors::{catch, in_subtransaction, Caught};
