//! The connection pool.

use std::str::FromStr;

use deadpool_postgres::{Manager, ManagerConfig, Pool, QueueMode, RecyclingMethod};

use crate::config::Config;

/// One event-loop thread's pool: `size` connections at most.
pub fn pool(config: &Config, size: usize) -> Result<Pool, String> {
    let pg = tokio_postgres::Config::from_str(&config.database_url)
        .map_err(|e| format!("DATABASE_URL: {e}"))?;
    let manager = Manager::from_config(
        pg,
        tokio_postgres::NoTls,
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
