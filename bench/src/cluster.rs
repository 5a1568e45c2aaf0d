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

/// Installs pgmq from the crate's embedded install SQL into database
/// `queen` of the cluster `dsn` names (its host 127.0.0.1, its port), once.
pub fn install_pgmq(dsn: &str) {
    let port = dsn
        .split_whitespace()
        .find_map(|kv| kv.strip_prefix("port="))
        .unwrap_or("5432")
        .to_owned();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let pool = sqlx::postgres::PgPoolOptions::new()
            .max_connections(1)
            .connect(&format!(
                "postgres:///queen?host=127.0.0.1&port={port}&user=postgres"
            ))
            .await
            .expect("sqlx connect");
        pgmq::install::install_sql_from_embedded(&pool)
            .await
            .expect("pgmq install");
    });
}
