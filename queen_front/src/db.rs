//! The connection pool, and the one place the routes run SQL.

use std::sync::OnceLock;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, QueueMode, RecyclingMethod};
use tokio::time::{timeout_at, Instant};
use tokio_postgres::types::{FromSql, ToSql};
use tokio_postgres::Statement;
use tokio_postgres_rustls::MakeRustlsConnect;

use crate::config::Config;
use crate::error::ApiError;

/// The TLS a cancel request is made with: that of the connections (every
/// pool of a front-end is made from the same connection string).
static CANCEL_TLS: OnceLock<MakeRustlsConnect> = OnceLock::new();

fn cancel_tls() -> MakeRustlsConnect {
    CANCEL_TLS
        .get()
        .cloned()
        .expect("a pool was made before any statement ran")
}

/// One event-loop thread's pool: `size` connections at most, with TLS as
/// the connection string asks (`crate::tls`).
pub fn pool(config: &Config, size: usize) -> Result<Pool, String> {
    let db = crate::tls::database(&config.database_url)?;
    let _ = CANCEL_TLS.set(db.tls.clone());
    let manager = Manager::from_config(
        db.config,
        db.tls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(size)
        // The connection used last is handed out first: the fewest backends
        // stay busy, and theirs are the warm caches.
        .queue_mode(QueueMode::Lifo)
        .wait_timeout(Some(config.request_timeout))
        .create_timeout(Some(config.request_timeout))
        .runtime(deadpool_postgres::Runtime::Tokio1)
        .build()
        .map_err(|e| format!("pool: {e}"))
}

/// Runs one statement answering one value (JSON, text or bytes) within
/// `timeout`, waiting for a connection included. A statement still running
/// when the time is up is canceled, and the answer waits for the server to
/// say how it ended (at most [`OUTCOME_WAIT`]): canceled (nothing applied,
/// 503), or done first (its answer, late). Only a server that says
/// neither, or a connection that breaks while the statement runs, answers
/// 504 "outcome unknown": a 503 always means nothing was applied. Such a
/// connection leaves the pool: it is never handed out again while the
/// statement may still run, and a late cancel can not hit a later
/// statement on it.
pub async fn one_value<T>(
    pool: &Pool,
    timeout: Duration,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<T, ApiError>
where
    T: for<'a> FromSql<'a>,
{
    try_value(pool, timeout, sql, params)
        .await
        .map_err(Failed::into_error)
}

/// Why a statement gave no answer.
#[derive(Debug)]
pub enum Failed {
    /// The server ran it and raised an ERROR: nothing of it committed.
    Refused(ApiError),
    /// The statement waited on a lock past its `lock_timeout` (55P03) and
    /// was refused: nothing of it committed.
    LockWait(ApiError),
    /// No connection, a broken one, or out of time.
    Other(ApiError),
}

impl Failed {
    /// The answer to the request, whatever the failure.
    pub fn into_error(self) -> ApiError {
        match self {
            Failed::Refused(e) | Failed::LockWait(e) | Failed::Other(e) => e,
        }
    }
}

/// How long a statement that outran its request is given to answer its
/// cancel, the cancel's own delivery included (the server checks for a
/// cancel between rows and while it waits on a lock: far less than this
/// unless it is stuck or away).
pub const OUTCOME_WAIT: Duration = Duration::from_secs(5);

/// `one_value`, telling an ERROR the server raised from any other failure.
pub async fn try_value<T>(
    pool: &Pool,
    timeout: Duration,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
) -> Result<T, Failed>
where
    T: for<'a> FromSql<'a>,
{
    let deadline = Instant::now() + timeout;
    let (client, stmt) = prepared(pool, sql, deadline).await?;
    // A connection whose statement was canceled or broke leaves the pool.
    let mut discard = false;
    let outcome = {
        let work = async {
            let row = client.query_one(&stmt, params).await?;
            row.try_get::<_, T>(0)
        };
        let mut work = std::pin::pin!(work);
        match timeout_at(deadline, &mut work).await {
            Ok(r) => Some(r),
            Err(_) => {
                // Out of time: ask for a cancel, then wait for the server
                // to say how the statement ended.
                discard = true;
                let until = Instant::now() + OUTCOME_WAIT;
                cancel_by(&client, until).await;
                timeout_at(until, &mut work).await.ok()
            }
        }
    };
    let failed = match outcome {
        Some(Ok(answer)) => {
            if discard {
                // Done before the cancel came: applied, answered late.
                abandon(client);
            }
            return Ok(answer);
        }
        // Canceled at this request's ask: nothing of it was applied. (A
        // statement timeout's cancel is the server's refusal.)
        Some(Err(e))
            if discard && e.code() == Some(&tokio_postgres::error::SqlState::QUERY_CANCELED) =>
        {
            Failed::Other(ApiError::timeout())
        }
        Some(Err(e)) if crate::error::connection_lost(&e) => {
            tracing::warn!("database connection lost while a statement ran: {e}");
            discard = true;
            Failed::Other(ApiError::outcome_unknown())
        }
        Some(Err(e)) => answered(e),
        None => Failed::Other(ApiError::outcome_unknown()),
    };
    if discard {
        abandon(client);
    }
    Err(failed)
}

/// A connection from `pool` and `sql` prepared on it, by `deadline`.
async fn prepared(
    pool: &Pool,
    sql: &str,
    deadline: Instant,
) -> Result<(Object, Statement), Failed> {
    let client = match timeout_at(deadline, pool.get()).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => return Err(Failed::Other(e.into())),
        Err(_) => return Err(Failed::Other(ApiError::timeout())),
    };
    let stmt = match timeout_at(deadline, client.prepare_cached(sql)).await {
        Ok(Ok(stmt)) => stmt,
        // Nothing was run: a refusal to plan it, or no server.
        Ok(Err(e)) => return Err(answered(e)),
        Err(_) => {
            abandon(client);
            return Err(Failed::Other(ApiError::timeout()));
        }
    };
    Ok((client, stmt))
}

/// Asks the server to cancel what `client` runs, waiting for its answer
/// until `until`.
async fn cancel_by(client: &Object, until: Instant) {
    let cancel = client.cancel_token();
    match timeout_at(until, cancel.cancel_query(cancel_tls())).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!("canceling a statement that outran its request: {e}"),
        Err(_) => tracing::warn!("canceling a statement that outran its request: no answer"),
    }
}

/// The failure of a statement the server answered with an ERROR (or whose
/// answer did not read as expected).
fn answered(e: tokio_postgres::Error) -> Failed {
    if e.code() == Some(&tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE) {
        Failed::LockWait(e.into())
    } else if e.code() == Some(&tokio_postgres::error::SqlState::TRANSACTION_RESOLUTION_UNKNOWN) {
        // The sharding proxy's: a shard may have applied it. Never made
        // again.
        Failed::Other(e.into())
    } else if e.as_db_error().is_some() {
        Failed::Refused(e.into())
    } else {
        Failed::Other(e.into())
    }
}

/// Takes a connection whose statement outran its request (or was canceled,
/// or broke) out of the pool, asks the server to cancel whatever it may
/// still run, then closes the connection.
fn abandon(client: Object) {
    let cancel = client.cancel_token();
    let client = Object::take(client);
    tokio::spawn(async move {
        if let Err(e) = cancel.cancel_query(cancel_tls()).await {
            tracing::warn!("canceling a statement that outran its request: {e}");
        }
        drop(client);
    });
}
