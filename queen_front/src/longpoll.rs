//! Long polls. A pop with wait=true that finds nothing waits on its key (a
//! queue, or a namespace/task filter). All waiters of one key share one
//! poller, which asks the database once per period whether the key's
//! partitions moved; a push through this front-end wakes a waiter at once.
//! A waiter that got messages wakes the next one, so a burst is drained by
//! as many waiters as it needs and an idle key costs one query per period.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

#[derive(Default)]
struct Channel {
    notify: Notify,
    waiting: AtomicUsize,
}

/// Shared by every event-loop thread: a push served by one wakes a waiter
/// held by another.
#[derive(Clone)]
pub struct Waiters {
    channels: Arc<Mutex<HashMap<String, Arc<Channel>>>>,
    period: Duration,
}

/// What identifies the work a waiter waits for.
#[derive(Clone, Debug)]
pub enum Key {
    Queue(String),
    Filter {
        namespace: Option<String>,
        task: Option<String>,
    },
}

impl Key {
    fn name(&self) -> String {
        match self {
            Key::Queue(q) => format!("q:{q}"),
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

impl Waiters {
    pub fn new(period: Duration) -> Waiters {
        Waiters {
            channels: Arc::new(Mutex::new(HashMap::new())),
            period,
        }
    }

    /// Waits until woken or `timeout`, whichever comes first. A key's poller
    /// runs on the thread of its first waiter, with that thread's `pool`.
    pub async fn wait(&self, pool: &deadpool_postgres::Pool, key: &Key, timeout: Duration) {
        let (channel, start_poller) = {
            let mut map = self.channels.lock().unwrap();
            let name = key.name();
            let fresh = !map.contains_key(&name);
            let ch = map.entry(name).or_default().clone();
            ch.waiting.fetch_add(1, Ordering::SeqCst);
            (ch, fresh)
        };
        if start_poller {
            self.spawn_poller(pool.clone(), key.clone(), Arc::clone(&channel));
        }
        let _ = tokio::time::timeout(timeout, channel.notify.notified()).await;
        channel.waiting.fetch_sub(1, Ordering::SeqCst);
    }

    /// Wakes one waiter of the key (after a push, or after a waiter got work).
    pub fn wake(&self, key: &Key) {
        if let Some(ch) = self.channels.lock().unwrap().get(&key.name()) {
            ch.notify.notify_one();
        }
    }

    /// Wakes one waiter of the queue and of every filter (a push to a queue
    /// may satisfy a namespace/task waiter).
    pub fn wake_queue(&self, queue: &str) {
        let map = self.channels.lock().unwrap();
        for (name, ch) in map.iter() {
            if name == &format!("q:{queue}") || name.starts_with("f:") {
                ch.notify.notify_one();
            }
        }
    }

    fn spawn_poller(&self, pool: deadpool_postgres::Pool, key: Key, channel: Arc<Channel>) {
        let this = self.clone();
        tokio::spawn(async move {
            let mut last: Option<i64> = None;
            let mut periods = 0u32;
            loop {
                tokio::time::sleep(this.period).await;
                if channel.waiting.load(Ordering::SeqCst) == 0 {
                    let mut map = this.channels.lock().unwrap();
                    if channel.waiting.load(Ordering::SeqCst) == 0 {
                        map.remove(&key.name());
                        return;
                    }
                }
                periods += 1;
                let version = version(&pool, &key).await;
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
async fn version(pool: &deadpool_postgres::Pool, key: &Key) -> Option<i64> {
    let client = pool.get().await.ok()?;
    let row = match key {
        Key::Queue(q) => client
            .query_one(
                "SELECT COALESCE(sum(p.last_offset + 1), 0)::int8 FROM queen.log_partitions p
                   JOIN queen.queues q ON q.id = p.queue_id WHERE q.name = $1",
                &[q],
            )
            .await
            .ok()?,
        Key::Filter { namespace, task } => client
            .query_one(
                "SELECT COALESCE(sum(p.last_offset + 1), 0)::int8 FROM queen.log_partitions p
                   JOIN queen.queues q ON q.id = p.queue_id
                  WHERE ($1::text IS NULL OR q.namespace = $1) AND ($2::text IS NULL OR q.task = $2)",
                &[namespace, task],
            )
            .await
            .ok()?,
    };
    Some(row.get(0))
}
