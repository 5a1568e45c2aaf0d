//! Long polls. A pop with wait=true that finds nothing waits on its key (a
//! queue, or a namespace/task filter). All waiters of one key share one
//! poller, which asks the database once per period whether the key's
//! partitions moved; a push through this front-end wakes a waiter at once.
//! A waiter that got messages wakes the next one, so a burst is drained by
//! as many waiters as it needs and an idle key costs one query per period.
//!
//! The state is bounded: at most `QUEEN_MAX_WAITERS` waiters at once, over
//! all keys, and a key (with its poller) exists only while it has a waiter.
//! A waiter leaves when its wait ends or its request is dropped (the client
//! went away); the last one to leave a key removes it and stops its poller.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

#[derive(Default)]
struct Channel {
    /// Wakes one waiter.
    notify: Notify,
    /// Stops the key's poller once the key has no waiter left.
    stop: Notify,
}

struct Entry {
    channel: Arc<Channel>,
    waiting: usize,
}

#[derive(Default)]
struct Book {
    keys: HashMap<String, Entry>,
    /// Waiters over all keys.
    waiting: usize,
    /// Pollers running (for the tests: one per key, gone with it).
    #[cfg(test)]
    pollers: usize,
}

/// Shared by every event-loop thread: a push served by one wakes a waiter
/// held by another.
#[derive(Clone)]
pub struct Waiters {
    book: Arc<Mutex<Book>>,
    period: Duration,
    max_waiters: usize,
    /// How long a poller's query may take.
    query_timeout: Duration,
}

/// A long poll refused because `QUEEN_MAX_WAITERS` are already waiting.
#[derive(Debug, PartialEq, Eq)]
pub struct TooManyWaiters;

/// What identifies the work a waiter waits for.
#[derive(Clone, Debug)]
pub enum Key {
    Queue(String),
    Filter {
        namespace: Option<String>,
        task: Option<String>,
    },
    /// An ephemeral queue.
    Ephemeral(String),
}

impl Key {
    fn name(&self) -> String {
        match self {
            Key::Queue(q) => format!("q:{q}"),
            Key::Ephemeral(q) => format!("e:{q}"),
            Key::Filter { namespace, task } => format!(
                "f:{}:{}",
                namespace.as_deref().unwrap_or("*"),
                task.as_deref().unwrap_or("*")
            ),
        }
    }
}

/// Rechecks a key even when nothing was pushed (a lease ran out, a retry
/// delay passed), every this many periods.
const RECHECK_EVERY_PERIODS: u32 = 4;

/// A waiter's place on its key; leaving it (dropping it) is the only way
/// out, so a request dropped mid-wait leaves too.
struct Seat {
    waiters: Waiters,
    name: String,
}

impl Drop for Seat {
    fn drop(&mut self) {
        let mut book = self.waiters.book.lock().unwrap();
        book.waiting -= 1;
        let emptied = match book.keys.get_mut(&self.name) {
            Some(entry) => {
                entry.waiting -= 1;
                entry.waiting == 0
            }
            None => false,
        };
        if emptied {
            if let Some(entry) = book.keys.remove(&self.name) {
                entry.channel.stop.notify_one();
            }
        }
    }
}

impl Waiters {
    pub fn new(period: Duration, max_waiters: usize, query_timeout: Duration) -> Waiters {
        Waiters {
            book: Arc::new(Mutex::new(Book::default())),
            period,
            max_waiters,
            query_timeout,
        }
    }

    /// Waits until woken or `timeout`, whichever comes first; refused at once
    /// when `QUEEN_MAX_WAITERS` are waiting. A key's poller runs on the
    /// thread of its first waiter, with that thread's `pool`.
    pub async fn wait(
        &self,
        pool: &deadpool_postgres::Pool,
        key: &Key,
        timeout: Duration,
    ) -> Result<(), TooManyWaiters> {
        let name = key.name();
        let (channel, fresh) = {
            let mut book = self.book.lock().unwrap();
            if book.waiting >= self.max_waiters {
                return Err(TooManyWaiters);
            }
            book.waiting += 1;
            let mut fresh = false;
            let entry = book.keys.entry(name.clone()).or_insert_with(|| {
                fresh = true;
                Entry {
                    channel: Arc::default(),
                    waiting: 0,
                }
            });
            entry.waiting += 1;
            (Arc::clone(&entry.channel), fresh)
        };
        let _seat = Seat {
            waiters: self.clone(),
            name,
        };
        if fresh {
            self.spawn_poller(pool.clone(), key.clone(), Arc::clone(&channel));
        }
        let _ = tokio::time::timeout(timeout, channel.notify.notified()).await;
        Ok(())
    }

    /// Wakes one waiter of the key (after a push, or after a waiter got work).
    pub fn wake(&self, key: &Key) {
        if let Some(entry) = self.book.lock().unwrap().keys.get(&key.name()) {
            entry.channel.notify.notify_one();
        }
    }

    /// Wakes one waiter of the queue and of every filter (a push to a queue
    /// may satisfy a namespace/task waiter).
    pub fn wake_queue(&self, queue: &str) {
        let own = Key::Queue(queue.to_owned()).name();
        let book = self.book.lock().unwrap();
        for (name, entry) in book.keys.iter() {
            if name == &own || name.starts_with("f:") {
                entry.channel.notify.notify_one();
            }
        }
    }

    /// (keys, waiters, pollers) right now.
    #[cfg(test)]
    pub fn counts(&self) -> (usize, usize, usize) {
        let book = self.book.lock().unwrap();
        (book.keys.len(), book.waiting, book.pollers)
    }

    fn spawn_poller(&self, pool: deadpool_postgres::Pool, key: Key, channel: Arc<Channel>) {
        let period = self.period;
        let query_timeout = self.query_timeout;
        #[cfg(test)]
        let _running = {
            struct Running(Arc<Mutex<Book>>);
            impl Drop for Running {
                fn drop(&mut self) {
                    self.0.lock().unwrap().pollers -= 1;
                }
            }
            self.book.lock().unwrap().pollers += 1;
            Running(Arc::clone(&self.book))
        };
        tokio::spawn(async move {
            #[cfg(test)]
            let _running = _running;
            let mut last: Option<i64> = None;
            let mut periods = 0u32;
            loop {
                tokio::select! {
                    _ = channel.stop.notified() => return,
                    _ = tokio::time::sleep(period) => {}
                }
                periods += 1;
                let version = tokio::select! {
                    _ = channel.stop.notified() => return,
                    v = version(&pool, query_timeout, &key) => v,
                };
                let moved = version.is_some() && version != last;
                last = version.or(last);
                if moved || periods.is_multiple_of(RECHECK_EVERY_PERIODS) {
                    channel.notify.notify_one();
                }
            }
        });
    }
}

/// A number that changes whenever a message is pushed to the key.
async fn version(pool: &deadpool_postgres::Pool, timeout: Duration, key: &Key) -> Option<i64> {
    let answer = match key {
        Key::Queue(q) => {
            crate::db::one_value(pool, timeout, "SELECT queen.queue_version($1)", &[q]).await
        }
        Key::Filter { namespace, task } => {
            crate::db::one_value(
                pool,
                timeout,
                "SELECT queen.queue_version(NULL, $1, $2)",
                &[namespace, task],
            )
            .await
        }
        // What the queue holds, per partition and group, hashed: a push
        // changes it. A read: no waiter pops to learn it. A queue neither
        // declared nor live answers an error, which moves nothing.
        Key::Ephemeral(q) => {
            crate::db::one_value(
                pool,
                timeout,
                "SELECT hashtext(queen.ephemeral_depth($1)::text)::int8",
                &[q],
            )
            .await
        }
    };
    answer.ok()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::{Key, TooManyWaiters, Waiters};

    fn pool() -> deadpool_postgres::Pool {
        let config = crate::tests::config(&[]);
        crate::db::pool(&config, 1).unwrap()
    }

    /// Waits up to two seconds for `done`.
    async fn eventually(done: impl Fn() -> bool) -> bool {
        let until = Instant::now() + Duration::from_secs(2);
        while !done() {
            if Instant::now() > until {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        true
    }

    fn queue(n: usize) -> Key {
        Key::Queue(format!("random-{n}"))
    }

    #[tokio::test]
    async fn waiters_beyond_the_bound_are_refused_at_once() {
        let waiters = Waiters::new(Duration::from_secs(60), 3, Duration::from_secs(1));
        let pool = pool();
        let held: Vec<_> = (0..3)
            .map(|n| {
                let (waiters, pool) = (waiters.clone(), pool.clone());
                tokio::spawn(async move {
                    waiters
                        .wait(&pool, &queue(n), Duration::from_secs(30))
                        .await
                })
            })
            .collect();
        assert!(eventually(|| waiters.counts().1 == 3).await);
        let started = Instant::now();
        for key in [queue(0), queue(99)] {
            assert_eq!(
                waiters.wait(&pool, &key, Duration::from_secs(30)).await,
                Err(TooManyWaiters)
            );
        }
        assert!(started.elapsed() < Duration::from_millis(100));
        // Three keys, three pollers: one per key with a waiter, no more.
        assert_eq!(waiters.counts(), (3, 3, 3));
        // Requests dropped mid-wait (their clients went away) give their
        // places back.
        for h in held {
            h.abort();
        }
        assert!(
            eventually(|| waiters.counts() == (0, 0, 0)).await,
            "{:?}",
            waiters.counts()
        );
        let answer = waiters
            .wait(&pool, &queue(7), Duration::from_millis(10))
            .await;
        assert_eq!(answer, Ok(()));
    }

    #[tokio::test]
    async fn a_key_without_waiters_is_dropped_with_its_poller() {
        // A period far longer than the test: the poller stops because its
        // key emptied, not because it woke up and looked.
        let waiters = Waiters::new(Duration::from_secs(3600), 10, Duration::from_secs(1));
        let pool = pool();
        for n in 0..50 {
            waiters
                .wait(&pool, &queue(n), Duration::from_millis(1))
                .await
                .unwrap();
            assert_eq!(waiters.counts().0, 0, "the key left with its waiter");
        }
        assert!(
            eventually(|| waiters.counts() == (0, 0, 0)).await,
            "{:?}",
            waiters.counts()
        );
        // Two waiters of one key share it; it goes with the second.
        let (w, p) = (waiters.clone(), pool.clone());
        let first =
            tokio::spawn(async move { w.wait(&p, &queue(1), Duration::from_secs(30)).await });
        assert!(eventually(|| waiters.counts() == (1, 1, 1)).await);
        waiters
            .wait(&pool, &queue(1), Duration::from_millis(1))
            .await
            .unwrap();
        assert_eq!(waiters.counts(), (1, 1, 1));
        waiters.wake(&queue(1));
        first.await.unwrap().unwrap();
        assert!(
            eventually(|| waiters.counts() == (0, 0, 0)).await,
            "{:?}",
            waiters.counts()
        );
    }

    #[tokio::test]
    async fn a_push_wakes_a_waiter_of_its_queue_and_of_every_filter() {
        let waiters = Waiters::new(Duration::from_secs(3600), 10, Duration::from_secs(1));
        let pool = pool();
        let keys = [
            Key::Queue("orders".into()),
            Key::Filter {
                namespace: Some("shop".into()),
                task: None,
            },
            Key::Queue("other".into()),
        ];
        let held: Vec<_> = keys
            .iter()
            .cloned()
            .map(|key| {
                let (w, p) = (waiters.clone(), pool.clone());
                tokio::spawn(async move {
                    let started = Instant::now();
                    w.wait(&p, &key, Duration::from_millis(1500)).await.unwrap();
                    started.elapsed()
                })
            })
            .collect();
        assert!(eventually(|| waiters.counts().1 == 3).await);
        waiters.wake_queue("orders");
        let waited: Vec<Duration> = futures_join(held).await;
        assert!(waited[0] < Duration::from_millis(1000), "{waited:?}");
        assert!(waited[1] < Duration::from_millis(1000), "{waited:?}");
        assert!(waited[2] >= Duration::from_millis(1500), "{waited:?}");
    }

    async fn futures_join(handles: Vec<tokio::task::JoinHandle<Duration>>) -> Vec<Duration> {
        let mut out = Vec::new();
        for h in handles {
            out.push(h.await.unwrap());
        }
        out
    }
}
