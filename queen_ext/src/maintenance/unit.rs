//! A unit of maintenance work and how it runs: inline in the caller's
//! transaction (each unit a subtransaction) when driven from SQL, or in a
//! transaction of its own in a worker. Either way an ERROR undoes only that
//! unit and comes back as a [`Failure`] with its SQLSTATE.

use pgrx::spi::SpiClient;

use super::bgworker::{in_own_transaction_coded, stopping};
use crate::pg::spi;
use crate::pg::subxact;

/// Why a unit of work failed: the SQLSTATE and message of its ERROR.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub sqlstate: String,
    pub message: String,
}

impl Failure {
    pub fn new(sqlstate: impl Into<String>, message: impl Into<String>) -> Failure {
        Failure {
            sqlstate: sqlstate.into(),
            message: message.into(),
        }
    }

    /// The worker was asked to stop.
    pub fn terminated() -> Failure {
        Failure::new("57P01", "terminated")
    }

    /// A failure of the caller or of the server, not of the partition being
    /// worked on: the cycle stops. A cancel or statement timeout (57014) and
    /// a shutdown (57P0x) are the caller's; a connection gone (08), a lack of
    /// resources (53: disk full, out of memory) and a system error (58: I/O)
    /// would fail every partition alike. Anything else is the partition's,
    /// and the cycle carries on with the others.
    pub fn stops_the_cycle(&self) -> bool {
        ["57", "08", "53", "58"]
            .iter()
            .any(|class| self.sqlstate.starts_with(class))
    }

    /// A concurrent change the step lost to: it is retried at once.
    pub fn is_retry(&self) -> bool {
        matches!(self.sqlstate.as_str(), "40001" | "40P01")
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SQLSTATE {}: {}", self.sqlstate, self.message)
    }
}

impl From<(String, String)> for Failure {
    fn from((sqlstate, message): (String, String)) -> Failure {
        Failure { sqlstate, message }
    }
}

/// Runs one unit of work: inline in the caller's transaction (SQL-driven),
/// or in a transaction of its own (a worker). Either way an ERROR undoes
/// only that unit and comes back as a [`Failure`].
pub trait Runner {
    fn run<R>(&mut self, f: impl FnOnce(&mut SpiClient<'_>) -> R) -> Result<R, Failure>;
}

/// Runs everything in the calling backend's current transaction, each unit
/// in a subtransaction of its own.
pub struct Inline;

impl Runner for Inline {
    fn run<R>(&mut self, f: impl FnOnce(&mut SpiClient<'_>) -> R) -> Result<R, Failure> {
        in_subtransaction(|| spi::spi(f)).map_err(Failure::from)
    }
}

/// Runs `f` in a subtransaction of the current transaction; an ERROR rolls
/// back only what `f` did and comes back as Err, with its SQLSTATE and
/// message.
pub fn in_subtransaction<R>(f: impl FnOnce() -> R) -> Result<R, (String, String)> {
    subxact::in_subtransaction(f).map_err(|c| (c.sqlstate, c.message))
}

/// Every unit of work in its own transaction; stops at SIGTERM.
pub struct OwnTransactions;

impl Runner for OwnTransactions {
    fn run<R>(&mut self, f: impl FnOnce(&mut pgrx::spi::SpiClient<'_>) -> R) -> Result<R, Failure> {
        if stopping() {
            return Err(Failure::terminated());
        }
        in_own_transaction_coded(|| spi::spi(f)).map_err(Failure::from)
    }
}
