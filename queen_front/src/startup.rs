//! Start-up: the log, the configuration read from the environment, the token
//! check, and the state each event-loop thread serves with. A setting that
//! can not be served stops the start with exit status 2 and its reason on
//! stderr.

use std::sync::Arc;

use tracing_subscriber::EnvFilter;

use crate::auth::Auth;
use crate::config::Config;
use crate::db;
use crate::fusion::Fusion;
use crate::longpoll;
use crate::state::{AppState, ThreadState};

/// The exit status of a start refused for its settings (or for an address
/// it can not listen on).
const REFUSED: i32 = 2;

/// Stops the start: `msg` goes to stderr, the process exits with status 2.
pub fn fail(msg: String) -> ! {
    eprintln!("queen_front: {msg}");
    std::process::exit(REFUSED);
}

/// The log: `RUST_LOG` when it is set and parses, else `info`.
pub fn init_log() {
    tracing_subscriber::fmt()
        .with_env_filter(
            EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info")),
        )
        .init();
}

/// The settings the server starts with, checked.
pub struct Startup {
    /// The configuration, checked.
    pub config: Arc<Config>,
    /// The token check, built from the configured keys.
    pub auth: Auth,
}

impl Startup {
    /// Reads the configuration from the environment and builds the token
    /// check; fails the start on a setting that does not parse or can not
    /// be served.
    pub fn from_env() -> Startup {
        let config = Arc::new(Config::from_env().unwrap_or_else(|e| fail(e)));
        let auth = Auth::new(&config.jwt).unwrap_or_else(|e| fail(e));
        let startup = Startup { config, auth };
        if !startup.auth.is_on() {
            tracing::warn!(
                "no JWT key is set (JWT_SECRET, JWT_PUBLIC_KEY, QUEEN_JWT_PUBLIC_KEY_FILE): \
                 every route is open to anyone who can reach {}",
                startup.address()
            );
        }
        startup
    }

    /// The address as configured (`HOST:PORT`), for messages.
    pub fn address(&self) -> String {
        format!("{}:{}", self.config.host, self.config.port)
    }

    /// The host to bind: `HOST` without the brackets of an IPv6 literal.
    pub fn bind_host(&self) -> String {
        self.config
            .host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_owned()
    }

    /// The request fusion lanes, with the connections they hold (none
    /// with fusion off); `Fusion::spawn` runs them.
    pub fn fusion(&self) -> (Fusion, Option<deadpool_postgres::Pool>) {
        let fusion = Fusion::new(&self.config.fusion, Arc::default());
        let pool = self
            .config
            .fusion
            .on
            .then(|| db::pool(&self.config, fusion.connections()).unwrap_or_else(|e| fail(e)));
        (fusion, pool)
    }

    /// The state of each event-loop thread. The pool is shared out: each
    /// thread holds its part of `QUEEN_POOL_SIZE`, at least one connection;
    /// the long polls are common to all. Fails the start on a
    /// `DATABASE_URL` that does not parse.
    pub fn thread_states(&self, fusion: &Fusion) -> Vec<AppState> {
        let config = &self.config;
        let waiters = longpoll::Waiters::new(
            config.long_poll_period,
            config.max_waiters,
            config.request_timeout,
        );
        let per_thread = config.pool_size.div_ceil(config.threads).max(1);
        let figures = Arc::new(crate::report::Figures::default());
        let queue_listing = Arc::new(crate::metrics::QueueListing::default());
        let group_listing = Arc::new(crate::metrics::QueueListing::default());
        (0..config.threads)
            .map(|_| {
                AppState::new(ThreadState {
                    pool: db::pool(config, per_thread).unwrap_or_else(|e| fail(e)),
                    config: Arc::clone(config),
                    auth: self.auth.clone(),
                    waiters: waiters.clone(),
                    fusion: fusion.clone(),
                    figures: Arc::clone(&figures),
                    queue_listing: Arc::clone(&queue_listing),
                    group_listing: Arc::clone(&group_listing),
                })
            })
            .collect()
    }
}
