//! The state every handler is given: its event-loop thread's share of the
//! connection pool, and what all threads hold in common.

use std::sync::Arc;

use crate::auth::Auth;
use crate::config::Config;
use crate::fusion::Fusion;
use crate::longpoll::Waiters;
use crate::report::Figures;

/// One event-loop thread's state, cloned into each request it serves (and
/// by each layer that takes it): one reference count, whatever it holds.
#[derive(Clone)]
pub struct AppState(Arc<ThreadState>);

impl AppState {
    pub fn new(state: ThreadState) -> AppState {
        AppState(Arc::new(state))
    }
}

impl std::ops::Deref for AppState {
    type Target = ThreadState;

    fn deref(&self) -> &ThreadState {
        &self.0
    }
}

/// What an `AppState` holds.
pub struct ThreadState {
    /// This thread's connections (its share of `QUEEN_POOL_SIZE`).
    pub pool: deadpool_postgres::Pool,
    /// The configuration, shared by every thread.
    pub config: Arc<Config>,
    /// The token check, shared by every thread.
    pub auth: Auth,
    /// The long polls of every thread.
    pub waiters: Waiters,
    /// This thread's request fusion lanes.
    pub fusion: Fusion,
    /// The requests answered since the last report, shared by every thread.
    pub figures: Arc<Figures>,
    /// The queue listing the metrics scrapes share, over every thread.
    pub queue_listing: Arc<crate::metrics::QueueListing>,
    /// The consumer group listing the metrics scrapes share.
    pub group_listing: Arc<crate::metrics::QueueListing>,
}
