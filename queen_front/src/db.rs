//! The connection pool, and the one place the routes run SQL.

use std::str::FromStr;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, QueueMode, RecyclingMethod};
use tokio::time::{timeout_at, Instant};
use tokio_postgres::types::{FromSql, ToSql};
use tokio_postgres::NoTls;

use crate::config::Config;
use crate::error::ApiError;

/// One event-loop thread's pool: `size` connections at most.
pub fn pool(config: &Config, size: usize) -> Result<Pool, String> {
    let pg = tokio_postgres::Config::from_str(&config.database_url)
        .map_err(|e| format!("DATABASE_URL: {e}"))?;
    let manager = Manager::from_config(
        pg,
        NoTls,
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
/// when the time is up is canceled, and its connection leaves the pool: it
/// is never handed out again while the statement may still run, and a late
/// cancel can not hit a later statement on it.
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
    let client = match timeout_at(deadline, pool.get()).await {
        Ok(Ok(client)) => client,
        Ok(Err(e)) => return Err(Failed::Other(e.into())),
        Err(_) => return Err(Failed::Other(ApiError::timeout())),
    };
    let work = async {
        let stmt = client.prepare_cached(sql).await?;
        let row = client.query_one(&stmt, params).await?;
        row.try_get::<_, T>(0)
    };
    match timeout_at(deadline, work).await {
        Ok(Ok(answer)) => Ok(answer),
        Ok(Err(e)) if e.code() == Some(&tokio_postgres::error::SqlState::LOCK_NOT_AVAILABLE) => {
            Err(Failed::LockWait(e.into()))
        }
        Ok(Err(e)) if e.as_db_error().is_some() => Err(Failed::Refused(e.into())),
        Ok(Err(e)) => Err(Failed::Other(e.into())),
        Err(_) => {
            abandon(client);
            Err(Failed::Other(ApiError::timeout()))
        }
    }
}

/// Takes a connection whose statement outran its request out of the pool,
/// asks the server to cancel the statement, then closes the connection.
fn abandon(client: Object) {
    let cancel = client.cancel_token();
    let client = Object::take(client);
    tokio::spawn(async move {
        if let Err(e) = cancel.cancel_query(NoTls).await {
            tracing::warn!("canceling a statement that outran its request: {e}");
        }
        drop(client);
    });
}
