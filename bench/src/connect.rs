//! Connecting to the bench cluster: the DSN a bench runs against when given
//! none, plain connections, and connections that prepare each statement once.

use std::collections::HashMap;

use postgres::types::ToSql;
use postgres::{Client, NoTls, Row, Statement};

/// The cluster `make bench` starts (127.0.0.1:6534, database `queen`).
pub const DEFAULT_DSN: &str = "host=127.0.0.1 port=6534 user=postgres dbname=queen";

/// The DSN given on the command line, or [`DEFAULT_DSN`].
pub fn dsn_or_default(arg: Option<String>) -> String {
    arg.unwrap_or_else(|| DEFAULT_DSN.into())
}

/// A connection to `dsn`; panics when it cannot connect.
pub fn connect(dsn: &str) -> Client {
    Client::connect(dsn, NoTls).expect("connect")
}

/// The one int8 that `sql` answers.
pub fn scalar(c: &mut Client, sql: &str) -> i64 {
    c.query_one(sql, &[]).unwrap().get(0)
}

/// A connection that prepares each statement text once and then only
/// binds and executes it, one round trip per call, as a client library with
/// a statement cache does (sqlx, pgx, JDBC). Every contender measured
/// through SQL is called through one of these.
pub struct Conn {
    /// The connection itself, for what is not a prepared call.
    pub client: Client,
    prepared: HashMap<&'static str, Statement>,
}

impl Conn {
    /// A new connection to `dsn`, with nothing prepared yet.
    pub fn new(dsn: &str) -> Conn {
        Conn {
            client: connect(dsn),
            prepared: HashMap::new(),
        }
    }

    fn statement(&mut self, sql: &'static str) -> Statement {
        let Conn { client, prepared } = self;
        prepared
            .entry(sql)
            .or_insert_with(|| client.prepare(sql).expect("prepare"))
            .clone()
    }

    /// Executes `sql` (prepared on its first call); answers the rows it
    /// touched. Panics, naming the statement, when it fails.
    pub fn execute(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> u64 {
        let st = self.statement(sql);
        self.client
            .execute(&st, params)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The rows `sql` (prepared on its first call) answers.
    pub fn query(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Vec<Row> {
        let st = self.statement(sql);
        self.client
            .query(&st, params)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// The one row `sql` (prepared on its first call) answers.
    pub fn query_one(&mut self, sql: &'static str, params: &[&(dyn ToSql + Sync)]) -> Row {
        let st = self.statement(sql);
        self.client
            .query_one(&st, params)
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }
}
