//! Request fusion: small requests of one kind (pushes, acks, lease
//! renewals) that arrive while calls of that kind are in flight go to the
//! database together, as one call of the extension's fused functions
//! (`queen.push_fused`, `queen.ack_fused`, `queen.renew_fused`), one
//! transaction and one commit for all of them.
//!
//! A front-end has one lane per kind, shared by its event-loop threads and
//! run on a thread of its own with its own connections, so that every
//! request of a kind can fuse with every other. A lane with a free call
//! slot sends what it holds at once, so a lone request waits for nothing;
//! while `max_inflight` calls are out, arrivals gather and go as the next
//! call, up to `max_items` requests and `max_bytes` of bodies. A call of one
//! request is the request's own call, as with fusion off; a request of
//! `alone_bytes` or more always makes its own call at once. Every request gets
//! the answer it would have got alone: the extension answers each on its
//! own, refusing a bad one alone while the others commit. When a fused call
//! fails as a whole (a deadlock, a serialization failure, a lock or
//! statement timeout), every request in it is made again on its own.
//!
//! A call made holding a lane's slot waits on a row lock at most
//! `lock_wait` (its `lock_timeout`): a request that meets a lock held longer
//! (another transaction's open push to its partition) gives the slot back
//! and makes its own call from its own thread, waiting within its own
//! deadline, so that one stuck request never holds up the lane.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use deadpool_postgres::Pool;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio::time::Instant;
use tokio_postgres::types::ToSql;

use crate::config::{Config, FusionConfig};
use crate::db::{self, Failed};
use crate::error::ApiError;

/// The kinds of requests that fuse; one lane each.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Push,
    Ack,
    Renew,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Push, Kind::Ack, Kind::Renew];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Push => "push",
            Kind::Ack => "ack",
            Kind::Renew => "renew",
        }
    }
}

/// One request, as its call takes it.
pub enum Job {
    /// A push body: JSON text (already checked to be UTF-8) or a binary
    /// push body, and the producer its frames are stamped with.
    Push {
        body: Bytes,
        binary: bool,
        producer: Option<String>,
    },
    /// An ack body, JSON text.
    Ack { body: String },
    /// A lease renewal.
    Renew { lease: String, seconds: Option<i32> },
}

impl Job {
    fn kind(&self) -> Kind {
        match self {
            Job::Push { .. } => Kind::Push,
            Job::Ack { .. } => Kind::Ack,
            Job::Renew { .. } => Kind::Renew,
        }
    }

    fn bytes(&self) -> usize {
        match self {
            Job::Push { body, .. } => body.len(),
            Job::Ack { body } => body.len(),
            Job::Renew { lease, .. } => lease.len(),
        }
    }

    /// The request's own call within `left`, answering the extension's
    /// JSON text.
    pub async fn alone(&self, pool: &Pool, left: Duration) -> Result<String, ApiError> {
        self.call(pool, left, None)
            .await
            .map_err(Failed::into_error)
    }

    /// The request's own call within `left`; with `lock_wait`, a row lock
    /// it waits on longer than that refuses it (`Failed::LockWait`).
    async fn call(
        &self,
        pool: &Pool,
        left: Duration,
        lock_wait: Option<Duration>,
    ) -> Result<String, Failed> {
        let wait = lock_wait.map(lock_timeout);
        match self {
            Job::Push {
                body,
                binary: true,
                producer,
            } => {
                let sql = "SELECT queen.push_binary($1, $2)::text";
                within(pool, left, sql, &[&body.as_ref(), producer], &wait).await
            }
            Job::Push { body, producer, .. } => {
                let text = std::str::from_utf8(body).map_err(|_| {
                    Failed::Refused(ApiError::bad_request("malformed JSON body: not UTF-8"))
                })?;
                let sql = "SELECT queen.push_text($1, $2)::text";
                within(pool, left, sql, &[&text, producer], &wait).await
            }
            Job::Ack { body } => {
                within(
                    pool,
                    left,
                    "SELECT queen.ack_text($1)::text",
                    &[body],
                    &wait,
                )
                .await
            }
            Job::Renew { lease, seconds } => {
                let sql = "SELECT queen.renew_lease($1, $2)::text";
                within(pool, left, sql, &[lease, seconds], &wait).await
            }
        }
    }
}

/// A `lock_timeout` value for `wait`.
fn lock_timeout(wait: Duration) -> String {
    format!("{}ms", wait.as_millis().max(1))
}

/// Makes the call `sql` (one SELECT answering one value) with `params`
/// within `left`; with `wait` (a `lock_timeout`), in a transaction whose
/// lock waits it bounds: the setting is made for the call's transaction
/// alone, in the same statement, before the call runs (the call reads its
/// row from it).
async fn within(
    pool: &Pool,
    left: Duration,
    sql: &str,
    params: &[&(dyn ToSql + Sync)],
    wait: &Option<String>,
) -> Result<String, Failed> {
    let Some(wait) = wait else {
        return db::try_value(pool, left, sql, params).await;
    };
    let bounded = format!(
        "WITH w AS MATERIALIZED (SELECT set_config('lock_timeout', ${}, true)) {sql} FROM w",
        params.len() + 1
    );
    let mut all: Vec<&(dyn ToSql + Sync)> = params.to_vec();
    all.push(wait);
    db::try_value(pool, left, &bounded, &all).await
}

/// What a request waiting in a lane gets back: its answer, or its job, for
/// it to make its own call within its own deadline (its call in the lane
/// waited on a row lock past `lock_wait`, and gave the lane's slot back).
enum Outcome {
    Answered(Answer),
    Alone(Job),
}

/// A request waiting in its lane, with where its answer goes.
struct Pending {
    job: Job,
    /// The request's own deadline (its request timeout from when it came).
    deadline: Instant,
    reply: oneshot::Sender<Outcome>,
    /// The mailbox of the thread the request waits on (None: answered
    /// straight through `reply`).
    home: Option<Home>,
}

impl Pending {
    /// Gives the request its job back, for its own call (it waits on its
    /// own thread, not in the lane).
    fn hand_back(self) {
        let _ = self.reply.send(Outcome::Alone(self.job));
    }
}

/// A request's answer: the extension's JSON text, or the error to send.
type Answer = Result<String, ApiError>;

/// Answers for requests waiting on one thread, delivered together.
type Delivery = Vec<(oneshot::Sender<Outcome>, Answer)>;

/// A thread's mailbox: a task on that thread's runtime that hands each
/// answer of a delivery to its request. The answers of a fused call reach
/// each thread as one wake-up, not one per request: waking a task of
/// another thread's runtime is a system call (its event loop's waker),
/// waking one of the same thread is not.
#[derive(Clone)]
struct Home(mpsc::UnboundedSender<Delivery>);

thread_local! {
    static HOME: std::cell::RefCell<Option<Home>> = const { std::cell::RefCell::new(None) };
}

impl Home {
    /// The calling thread's mailbox, its task spawned on the runtime it
    /// runs in the first time (and again once that runtime has ended).
    fn here() -> Home {
        HOME.with(|slot| {
            let mut slot = slot.borrow_mut();
            if let Some(home) = slot.as_ref().filter(|h| !h.0.is_closed()) {
                return home.clone();
            }
            let (tx, mut rx) = mpsc::unbounded_channel::<Delivery>();
            tokio::spawn(async move {
                while let Some(delivery) = rx.recv().await {
                    for (reply, answer) in delivery {
                        let _ = reply.send(Outcome::Answered(answer));
                    }
                }
            });
            slot.insert(Home(tx)).clone()
        })
    }
}

/// Sends each request its answer, one delivery per thread they wait on.
fn deliver(answers: impl IntoIterator<Item = (Pending, Answer)>) {
    let mut homes: Vec<(Home, Delivery)> = Vec::new();
    for (p, answer) in answers {
        let Some(home) = p.home else {
            let _ = p.reply.send(Outcome::Answered(answer));
            continue;
        };
        match homes.iter_mut().find(|(h, _)| h.0.same_channel(&home.0)) {
            Some((_, delivery)) => delivery.push((p.reply, answer)),
            None => homes.push((home, vec![(p.reply, answer)])),
        }
    }
    for (home, delivery) in homes {
        // A mailbox whose runtime has ended: its requests are gone too, but
        // the answers are sent as they would be.
        if let Err(mpsc::error::SendError(delivery)) = home.0.send(delivery) {
            for (reply, answer) in delivery {
                let _ = reply.send(Outcome::Answered(answer));
            }
        }
    }
}

/// What a lane has done since the start, over every thread.
#[derive(Default)]
pub struct LaneStats {
    /// Requests the lane answered.
    pub requests: AtomicU64,
    /// Calls it made (a fused call, or a request's own call).
    pub calls: AtomicU64,
    /// Fused calls that failed as a whole, their requests made again alone.
    pub retried_calls: AtomicU64,
    /// The most requests one call held.
    pub largest_call: AtomicU64,
    /// Calls by the requests they held: `call_sizes[i]` counts the calls
    /// of more than `CALL_SIZE_BOUNDS[i - 1]` and at most
    /// `CALL_SIZE_BOUNDS[i]` requests; the last entry, those of more than
    /// every bound.
    pub call_sizes: [AtomicU64; CALL_SIZE_BOUNDS.len() + 1],
}

/// How often a closing lane looks whether the own calls of requests that
/// found it idle have ended.
const CLOSING_LOOK: Duration = Duration::from_millis(10);

/// The upper bounds of the call size histogram, in requests per call
/// (the last one is the most a fused call takes).
pub const CALL_SIZE_BOUNDS: [u64; 11] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000];

impl LaneStats {
    /// Counts one call of `requests` requests.
    fn observe(&self, requests: usize) {
        let n = requests as u64;
        self.requests.fetch_add(n, Ordering::Relaxed);
        self.calls.fetch_add(1, Ordering::Relaxed);
        let at = CALL_SIZE_BOUNDS
            .iter()
            .position(|b| n <= *b)
            .unwrap_or(CALL_SIZE_BOUNDS.len());
        self.call_sizes[at].fetch_add(1, Ordering::Relaxed);
        self.largest_call.fetch_max(n, Ordering::Relaxed);
    }
}

/// The lanes' figures, by kind (in the order of `Kind::ALL`).
#[derive(Default)]
pub struct Stats {
    pub lanes: [LaneStats; 3],
}

impl Stats {
    pub fn lane(&self, kind: Kind) -> &LaneStats {
        &self.lanes[kind as usize]
    }
}

/// The front-end's lanes; cloned into each request every thread serves.
#[derive(Clone)]
pub struct Fusion {
    /// None with fusion off. Nothing is sent on them: a lane ends once
    /// every clone of its sender is gone.
    senders: Option<Vec<mpsc::UnboundedSender<Infallible>>>,
    /// The lanes' ends, until `start` runs them.
    receivers: Arc<Mutex<Vec<mpsc::UnboundedReceiver<Infallible>>>>,
    /// Whether `start` ran: until then requests make their own calls.
    started: Arc<AtomicBool>,
    /// Each lane's calls in flight and requests waiting, by kind.
    gates: Arc<[Gate; 3]>,
    config: FusionConfig,
    pub stats: Arc<Stats>,
}

/// What a lane and the requests coming to it share: the calls of its kind in
/// flight (its own, and the own calls of requests that found it idle) and
/// the requests waiting in it.
///
/// A request joins the queue from its own thread and wakes the lane only
/// when a call slot is free: while every slot is taken, the end of a call
/// (on the lane's own thread) wakes it, so arrivals under load cost no
/// wake-up of another thread.
#[derive(Default)]
struct Gate {
    inflight: AtomicUsize,
    /// Requests given to the lane and not yet taken into a call (counted
    /// before they are queued, so no later request overtakes them).
    waiting: AtomicUsize,
    queue: Mutex<VecDeque<Pending>>,
    /// Woken when a call of the lane's kind ends, and when a request comes
    /// while a slot is free.
    stir: Notify,
}

impl Gate {
    /// Takes a call slot if fewer than `max` are taken.
    fn claim(&self, max: usize) -> bool {
        let mut busy = self.inflight.load(Ordering::Acquire);
        while busy < max {
            match self.inflight.compare_exchange(
                busy,
                busy + 1,
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => return true,
                Err(now) => busy = now,
            }
        }
        false
    }

    /// Gives a call slot back, and wakes the lane if requests wait in it. A
    /// request that found the lane idle gives its slot back on its own
    /// thread: waking the lane's thread for nothing after every such request
    /// made a lone push slower (bench/RESULTS.md). With every four accesses
    /// sequentially consistent, either this sees the waiting request or that
    /// request, queueing itself, sees the slot free and wakes the lane.
    fn release(&self) {
        self.inflight.fetch_sub(1, Ordering::SeqCst);
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.stir.notify_one();
        }
    }

    fn queued(&self) -> std::sync::MutexGuard<'_, VecDeque<Pending>> {
        self.queue.lock().expect("lane queue")
    }
}

/// A call slot a request took on an idle lane, given back when its call
/// ends or its request is dropped.
struct Slot<'a>(&'a Gate);

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.release();
    }
}

impl Fusion {
    pub fn new(config: &FusionConfig, stats: Arc<Stats>) -> Fusion {
        let (senders, receivers) = if config.on {
            Kind::ALL.iter().map(|_| mpsc::unbounded_channel()).unzip()
        } else {
            (Vec::new(), Vec::new())
        };
        Fusion {
            senders: config.on.then_some(senders),
            receivers: Arc::new(Mutex::new(receivers)),
            started: Arc::new(AtomicBool::new(false)),
            gates: Arc::default(),
            config: config.clone(),
            stats,
        }
    }

    /// Runs the lanes on the calling thread's runtime, their calls on
    /// `pool`; answers the tasks, each ending once every clone of this
    /// `Fusion` is gone and its calls are answered.
    pub fn start(&self, pool: &Pool) -> Vec<tokio::task::JoinHandle<()>> {
        let receivers = std::mem::take(&mut *self.receivers.lock().expect("lanes"));
        let tasks = Kind::ALL
            .into_iter()
            .zip(receivers)
            .map(|(kind, rx)| {
                let lane = Lane {
                    kind,
                    gates: Arc::clone(&self.gates),
                    pool: pool.clone(),
                    config: self.config.clone(),
                    stats: Arc::clone(&self.stats),
                };
                tokio::spawn(lane.run(rx))
            })
            .collect();
        self.started.store(true, Ordering::Release);
        tasks
    }

    /// The connections the lanes hold: one per call each may have in flight.
    pub fn connections(&self) -> usize {
        self.config.max_inflight * Kind::ALL.len()
    }

    /// Runs the lanes on a thread of their own, their calls on `pool` (its
    /// connections made on that thread); None with fusion off. The thread
    /// ends once every clone of this `Fusion` is gone and the last call is
    /// answered.
    pub fn spawn(&self, pool: Pool) -> Option<std::io::Result<std::thread::JoinHandle<()>>> {
        self.senders.as_ref()?;
        let fusion = Fusion {
            senders: None,
            ..self.clone()
        };
        // The lanes count as started from here: a request that comes before
        // the thread's runtime runs them waits in its lane's channel.
        self.started.store(true, Ordering::Release);
        Some(crate::runtime::runtime_thread(
            "queen-front-fusion".into(),
            move || async move {
                for task in fusion.start(&pool) {
                    let _ = task.await;
                }
            },
        ))
    }

    /// Whether requests go through the lanes.
    fn is_on(&self) -> bool {
        self.senders.is_some() && self.started.load(Ordering::Acquire)
    }

    /// The answer to `job` (the extension's JSON text): on a lane with no
    /// call in flight and none waiting, its own call at once on `pool` (the
    /// caller's thread's connections), the lane's slot held meanwhile; else
    /// through its lane. With fusion off the job comes back, for the caller
    /// to make the request's own call.
    pub async fn submit(&self, config: &Config, pool: &Pool, job: Job) -> Result<Answer, Job> {
        let Some(senders) = self.senders.as_ref().filter(|_| self.is_on()) else {
            return Err(job);
        };
        let kind = job.kind();
        // A large request shares little with others, and in the lane it
        // would wait for the call in flight: it makes its own call now.
        if job.bytes() >= self.config.alone_bytes {
            self.stats.lane(kind).observe(1);
            return Ok(job.alone(pool, config.request_timeout).await);
        }
        let deadline = Instant::now() + config.request_timeout;
        let gate = &self.gates[kind as usize];
        if gate.waiting.load(Ordering::Acquire) == 0 && gate.claim(self.config.max_inflight) {
            let slot = Slot(gate);
            self.stats.lane(kind).observe(1);
            let first = job
                .call(pool, config.request_timeout, Some(self.config.lock_wait))
                .await;
            drop(slot);
            return Ok(match first {
                // A row lock held elsewhere: the slot is given back and the
                // request waits for the lock within its own deadline.
                Err(Failed::LockWait(_)) => job.alone(pool, left(deadline)).await,
                other => other.map_err(Failed::into_error),
            });
        }
        // A lane that is gone (its thread stopped) hands the job back.
        if senders[kind as usize].is_closed() {
            return Err(job);
        }
        gate.waiting.fetch_add(1, Ordering::SeqCst);
        let (reply, answer) = oneshot::channel();
        gate.queued().push_back(Pending {
            deadline,
            reply,
            home: Some(Home::here()),
            job,
        });
        if gate.inflight.load(Ordering::SeqCst) < self.config.max_inflight {
            gate.stir.notify_one();
        }
        Ok(match answer.await {
            Ok(Outcome::Answered(a)) => a,
            Ok(Outcome::Alone(job)) => job.alone(pool, left(deadline)).await,
            Err(_) => Err(ApiError::internal()),
        })
    }
}

/// One lane: its kind, the connections its calls are made on, the bounds.
struct Lane {
    kind: Kind,
    gates: Arc<[Gate; 3]>,
    pool: Pool,
    config: FusionConfig,
    stats: Arc<Stats>,
}

impl Lane {
    /// What the lane shares with the requests coming to it.
    fn gate(&self) -> &Gate {
        &self.gates[self.kind as usize]
    }

    /// Takes requests until every sender is gone and the last call is
    /// answered. With no call in flight, whatever waits goes at once; with
    /// calls in flight and a slot free, the waiting requests go once they are
    /// as many as the last call held (so that a call is out while the one
    /// before it commits, and calls do not shrink to a request each); with
    /// every slot taken, they wait for the next call to end.
    async fn run(self, mut senders: mpsc::UnboundedReceiver<Infallible>) {
        let lane = Arc::new(self);
        let gate = lane.gate();
        let max = lane.config.max_inflight;
        let (mut last, mut open) = (0usize, true);
        loop {
            let busy = gate.inflight.load(Ordering::Acquire);
            let queued = gate.queued().len();
            let go = queued > 0 && (busy == 0 || queued >= last);
            if go && gate.claim(max) {
                let batch = lane.take(&mut gate.queued());
                gate.waiting.fetch_sub(batch.len(), Ordering::AcqRel);
                last = batch.len();
                let lane = Arc::clone(&lane);
                tokio::spawn(async move {
                    lane.serve(batch, Slot(lane.gate())).await;
                });
                continue;
            }
            if !open && queued == 0 && gate.inflight.load(Ordering::Acquire) == 0 {
                return;
            }
            // Closing, it looks again now and then for the own calls of
            // requests still in flight: their ends wake it only when
            // requests wait.
            tokio::select! {
                None = senders.recv(), if open => open = false,
                _ = gate.stir.notified() => {}
                _ = tokio::time::sleep(CLOSING_LOOK), if !open => {}
            }
        }
    }

    /// The next call's requests from the front of `waiting`: at most
    /// `max_items`, and `max_bytes` of bodies (a larger request alone).
    fn take(&self, waiting: &mut VecDeque<Pending>) -> Vec<Pending> {
        let mut bytes = 0usize;
        let mut batch = Vec::new();
        while let Some(next) = waiting.front() {
            let more = bytes + next.job.bytes();
            if batch.len() == self.config.max_items
                || (!batch.is_empty() && more > self.config.max_bytes)
            {
                break;
            }
            bytes = more;
            batch.extend(waiting.pop_front());
        }
        batch
    }

    /// Makes one call for `batch` and answers each request. The call's
    /// `slot` is given back as soon as the next call may go: once a fused
    /// call has committed, before its answer is read and delivered (the
    /// lane's thread does that while the next call runs); after the retries
    /// of one that failed as a whole, so that a later call never overtakes
    /// them.
    async fn serve(&self, batch: Vec<Pending>, slot: Slot<'_>) {
        // A request whose deadline passed while it waited is answered so,
        // and never reaches the database.
        let now = Instant::now();
        let (batch, expired): (Vec<Pending>, Vec<Pending>) =
            batch.into_iter().partition(|p| p.deadline > now);
        deliver(
            expired
                .into_iter()
                .map(|p| (p, Err(ApiError::not_applied()))),
        );
        if batch.is_empty() {
            return;
        }
        let stats = self.stats.lane(self.kind);
        stats.observe(batch.len());
        if batch.len() == 1 {
            let p = batch.into_iter().next().expect("one request");
            self.serve_one(p, slot).await;
            return;
        }
        let answered = self.fused(&batch).await;
        let mut slot = Some(slot);
        if answered.is_ok() {
            slot.take();
        }
        match answered.and_then(|text| split(&text, batch.len()).map_err(Failed::Other)) {
            Ok(answers) => {
                let mut done = Vec::with_capacity(batch.len());
                for (p, got) in batch.into_iter().zip(answers) {
                    match got {
                        // Its partition or cursor was held elsewhere past
                        // the bound: it waits for it on its own.
                        Got::LockWait => p.hand_back(),
                        Got::Answer(a) => done.push((p, a)),
                    }
                }
                deliver(done);
            }
            // Refused as a whole by the server: nothing of it committed;
            // each request is made again on its own.
            Err(Failed::Refused(_) | Failed::LockWait(_)) => {
                stats.retried_calls.fetch_add(1, Ordering::Relaxed);
                stats.calls.fetch_add(batch.len() as u64, Ordering::Relaxed);
                self.each_alone(batch, slot).await;
            }
            // No database, or out of time: every request is answered so.
            Err(Failed::Other(e)) => deliver(batch.into_iter().map(|p| (p, Err(e.clone())))),
        }
    }

    /// Makes the call of a lone request holding `slot`; one that waits on a
    /// row lock past the bound gives the slot back and gets its job back.
    async fn serve_one(&self, p: Pending, slot: Slot<'_>) {
        let wait = Some(self.config.lock_wait);
        match p.job.call(&self.pool, left(p.deadline), wait).await {
            Err(Failed::LockWait(_)) => {
                drop(slot);
                p.hand_back();
            }
            answer => {
                let _ = p
                    .reply
                    .send(Outcome::Answered(answer.map_err(Failed::into_error)));
            }
        }
    }

    /// Makes each request of a fused call refused as a whole again on its
    /// own, then gives `slot` back.
    async fn each_alone(&self, batch: Vec<Pending>, slot: Option<Slot<'_>>) {
        let wait = Some(self.config.lock_wait);
        // One after the other, in the order the lane took them: the order
        // of the messages per partition is kept. One that waits on a row
        // lock past the bound leaves the lane.
        let mut left_lane = Vec::new();
        for p in batch {
            match p.job.call(&self.pool, left(p.deadline), wait).await {
                Err(Failed::LockWait(_)) => left_lane.push(p),
                answer => {
                    let _ = p
                        .reply
                        .send(Outcome::Answered(answer.map_err(Failed::into_error)));
                }
            }
        }
        drop(slot);
        for p in left_lane {
            p.hand_back();
        }
    }

    /// The fused call for `batch`: its answer, one element per request.
    async fn fused(&self, batch: &[Pending]) -> Result<String, Failed> {
        let left = left(batch.iter().map(|p| p.deadline).min().expect("a batch"));
        let wait = Some(lock_timeout(self.config.lock_wait));
        let text: String = match self.kind {
            Kind::Push => {
                let mut bodies: Vec<&[u8]> = Vec::with_capacity(batch.len());
                let mut binary: Vec<bool> = Vec::with_capacity(batch.len());
                let mut producers: Vec<Option<&str>> = Vec::with_capacity(batch.len());
                for p in batch {
                    if let Job::Push {
                        body,
                        binary: b,
                        producer,
                    } = &p.job
                    {
                        bodies.push(body);
                        binary.push(*b);
                        producers.push(producer.as_deref());
                    }
                }
                let params: [&(dyn ToSql + Sync); 3] = [&bodies, &binary, &producers];
                let sql = "SELECT queen.push_fused($1, $2, $3)::text";
                within(&self.pool, left, sql, &params, &wait).await?
            }
            Kind::Ack => {
                let bodies: Vec<&str> = batch
                    .iter()
                    .filter_map(|p| match &p.job {
                        Job::Ack { body } => Some(body.as_str()),
                        _ => None,
                    })
                    .collect();
                let sql = "SELECT queen.ack_fused($1)::text";
                within(&self.pool, left, sql, &[&bodies], &wait).await?
            }
            Kind::Renew => {
                let mut leases: Vec<&str> = Vec::with_capacity(batch.len());
                let mut seconds: Vec<Option<i32>> = Vec::with_capacity(batch.len());
                for p in batch {
                    if let Job::Renew { lease, seconds: s } = &p.job {
                        leases.push(lease);
                        seconds.push(*s);
                    }
                }
                let sql = "SELECT queen.renew_fused($1, $2)::text";
                within(&self.pool, left, sql, &[&leases, &seconds], &wait).await?
            }
        };
        Ok(text)
    }
}

/// The time from now to `deadline`.
fn left(deadline: Instant) -> Duration {
    deadline.saturating_duration_since(Instant::now())
}

/// One element of a fused call's answer.
#[derive(Deserialize)]
struct Element<'a> {
    #[serde(borrow)]
    ok: Option<&'a RawValue>,
    sqlstate: Option<String>,
    error: Option<String>,
    detail: Option<String>,
}

/// One request's part of a fused call's answer.
enum Got {
    Answer(Answer),
    /// It waited on a row lock past the lane's bound (55P03): nothing of
    /// it was written.
    LockWait,
}

/// A fused call's answer as one answer per request.
fn split(text: &str, requests: usize) -> Result<Vec<Got>, ApiError> {
    let elements: Vec<Element<'_>> = serde_json::from_str(text).map_err(|e| {
        tracing::error!("a fused call's answer does not parse: {e}");
        ApiError::internal()
    })?;
    if elements.len() != requests {
        tracing::error!(
            "a fused call answered {} of {requests} requests",
            elements.len()
        );
        return Err(ApiError::internal());
    }
    Ok(elements
        .into_iter()
        .map(|e| match e.ok {
            Some(answer) => Got::Answer(Ok(answer.get().to_owned())),
            None if e.sqlstate.as_deref() == Some("55P03") => Got::LockWait,
            None => Got::Answer(Err(ApiError::from_sql(
                e.sqlstate.as_deref().unwrap_or("XX000"),
                e.error.as_deref().unwrap_or("error"),
                e.detail.as_deref(),
            ))),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    use axum::body::Bytes;
    use tokio::sync::{mpsc, oneshot};
    use tokio::time::Instant;

    use std::time::Duration;

    use super::{deliver, split, Fusion, Gate, Home, Job, Kind, Lane, Pending, Stats};
    use crate::error::ApiError;
    use crate::tests::fakepg::{FakePg, Reply, TEXT};
    use crate::tests::{config, UNREACHABLE};

    fn lane(url: &str) -> Lane {
        let config = config(&[("DATABASE_URL", url), ("QUEEN_POOL_SIZE", "4")]);
        Lane {
            kind: Kind::Push,
            gates: Arc::default(),
            pool: crate::db::pool(&config, 4).unwrap(),
            config: config.fusion.clone(),
            stats: Arc::new(Stats::default()),
        }
    }

    impl Lane {
        /// A call slot of the lane, taken as its run loop takes one.
        fn claimed(&self) -> super::Slot<'_> {
            assert!(self.gate().claim(self.config.max_inflight));
            super::Slot(self.gate())
        }
    }

    type Replies = Vec<oneshot::Receiver<super::Outcome>>;

    /// The answer an outcome carries (a job handed back is a failure here).
    fn answer(o: super::Outcome) -> Result<String, ApiError> {
        match o {
            super::Outcome::Answered(a) => a,
            super::Outcome::Alone(_) => panic!("handed back, not answered"),
        }
    }

    /// The answer of a request's part of a fused call.
    fn got(g: &super::Got) -> &Result<String, ApiError> {
        match g {
            super::Got::Answer(a) => a,
            super::Got::LockWait => panic!("a lock wait, not an answer"),
        }
    }

    fn pushes(n: usize) -> (Vec<Pending>, Replies) {
        (0..n)
            .map(|k| {
                let (reply, answer) = oneshot::channel();
                let job = Job::Push {
                    body: Bytes::from(format!(r#"[{{"queue": "q", "payload": {k}}}]"#)),
                    binary: false,
                    producer: None,
                };
                let deadline = Instant::now() + std::time::Duration::from_secs(2);
                (
                    Pending {
                        job,
                        deadline,
                        reply,
                        home: None,
                    },
                    answer,
                )
            })
            .unzip()
    }

    /// Serves `n` pushes as one batch on `lane` and checks that each is
    /// answered `answer`.
    async fn serve_pushes(lane: &Lane, n: usize, answer: &str) {
        let (batch, replies) = pushes(n);
        lane.serve(batch, lane.claimed()).await;
        for r in replies {
            assert_eq!(super::tests::answer(r.await.unwrap()).unwrap(), answer);
        }
    }

    /// A front-end's lanes, running on their own connections to
    /// `config`'s database.
    fn running(config: &crate::config::Config) -> (Fusion, std::thread::JoinHandle<()>) {
        let fusion = Fusion::new(&config.fusion, Arc::default());
        let lanes = fusion
            .spawn(crate::db::pool(config, fusion.connections()).unwrap())
            .unwrap()
            .unwrap();
        (fusion, lanes)
    }

    /// Drops `fusion` and waits for its lanes' thread to end.
    async fn stop(fusion: Fusion, lanes: std::thread::JoinHandle<()>) {
        drop(fusion);
        tokio::task::spawn_blocking(move || lanes.join().unwrap())
            .await
            .unwrap();
    }

    #[tokio::test]
    async fn a_slot_given_back_wakes_the_lane_only_when_requests_wait_in_it() {
        let gate = Gate::default();
        let woken = || tokio::time::timeout(Duration::from_millis(20), gate.stir.notified());
        // A lone request's own call ends with nobody waiting: no wake-up.
        assert!(gate.claim(1));
        gate.release();
        assert!(woken().await.is_err(), "woken with nothing to do");
        // One came while the slot was taken: the end of the call wakes the
        // lane for it.
        assert!(gate.claim(1));
        gate.waiting.fetch_add(1, Ordering::SeqCst);
        gate.release();
        assert!(woken().await.is_ok());
        assert_eq!(gate.inflight.load(Ordering::SeqCst), 0);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_closing_lane_ends_once_a_lone_requests_call_is_over() {
        let pg = FakePg::start(vec![]).await;
        let config = config(&[("DATABASE_URL", pg.url().as_str())]);
        let (fusion, lanes) = running(&config);
        // A request that found the lane idle holds its slot while the
        // front-end shuts down.
        let gates = Arc::clone(&fusion.gates);
        assert!(gates[Kind::Push as usize].claim(1));
        let stopping = tokio::spawn(stop(fusion, lanes));
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(!stopping.is_finished(), "ended with a call in flight");
        gates[Kind::Push as usize].release();
        tokio::time::timeout(Duration::from_secs(2), stopping)
            .await
            .expect("the lane ends once the call is over")
            .unwrap();
    }

    #[tokio::test]
    async fn a_fused_call_the_server_refuses_is_made_again_request_by_request() {
        let pg = FakePg::start(vec![
            (
                "queen.push_fused(",
                Reply::error("40P01", "deadlock detected"),
            ),
            (
                "queen.push_text(",
                Reply::text(&[TEXT, TEXT], r#"[{"index":0}]"#),
            ),
        ])
        .await;
        let lane = lane(&pg.url());
        serve_pushes(&lane, 3, r#"[{"index":0}]"#).await;
        assert_eq!(pg.executed("queen.push_text("), 3);
        let stats = lane.stats.lane(Kind::Push);
        assert_eq!(stats.retried_calls.load(Ordering::Relaxed), 1);
        assert_eq!(stats.requests.load(Ordering::Relaxed), 3);
        // The fused call, then one call per request.
        assert_eq!(stats.calls.load(Ordering::Relaxed), 4);
        assert_eq!(stats.largest_call.load(Ordering::Relaxed), 3);
        // One call of three requests: in the bucket of at most 4 (the
        // retries are not calls the lane gathered).
        let sizes: Vec<u64> = stats
            .call_sizes
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .collect();
        assert_eq!(sizes, [0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }

    /// A fused call the sharding proxy could not see through (canceled
    /// while a shard ran its part, which commits on its own: 08007) may
    /// have been applied in part: no request of it is made again, each is
    /// answered 504 outcome_unknown.
    #[tokio::test]
    async fn a_fused_call_whose_outcome_is_unknown_is_not_made_again() {
        let pg = FakePg::start(vec![
            (
                "queen.push_fused(",
                Reply::error(
                    "08007",
                    "canceled while a shard ran the call: it may have been applied there",
                ),
            ),
            (
                "queen.push_text(",
                Reply::text(&[TEXT, TEXT], r#"[{"index":0}]"#),
            ),
        ])
        .await;
        let lane = lane(&pg.url());
        let (batch, replies) = pushes(3);
        lane.serve(batch, lane.claimed()).await;
        for r in replies {
            let e = super::tests::answer(r.await.unwrap()).unwrap_err();
            assert_eq!(e.status, axum::http::StatusCode::GATEWAY_TIMEOUT);
            assert_eq!(e.code, "outcome_unknown");
        }
        assert_eq!(pg.executed("queen.push_text("), 0);
        let stats = lane.stats.lane(Kind::Push);
        assert_eq!(stats.retried_calls.load(Ordering::Relaxed), 0);
    }

    /// A server where every call made holding a lane's slot (its lock
    /// waits bounded) meets a row lock held past the bound, and every own
    /// call of a request gets through.
    async fn a_held_partition() -> FakePg {
        FakePg::start(vec![
            (
                "set_config('lock_timeout'",
                Reply::error("55P03", "canceling statement due to lock timeout"),
            ),
            (
                "queen.push_text(",
                Reply::text(&[TEXT, TEXT], r#"[{"index":0}]"#),
            ),
        ])
        .await
    }

    #[tokio::test]
    async fn a_lane_call_that_waits_on_a_held_lock_hands_its_requests_back() {
        let pg = a_held_partition().await;
        let lane = lane(&pg.url());
        // Fused, then each request alone (bounded): every one is handed
        // back, and the slot with it.
        let (batch, replies) = pushes(3);
        lane.serve(batch, lane.claimed()).await;
        for r in replies {
            assert!(matches!(
                r.await.unwrap(),
                super::Outcome::Alone(Job::Push { .. })
            ));
        }
        let (batch, mut replies) = pushes(1);
        lane.serve(batch, lane.claimed()).await;
        assert!(matches!(
            replies.remove(0).await.unwrap(),
            super::Outcome::Alone(_)
        ));
        assert_eq!(lane.gate().inflight.load(Ordering::Relaxed), 0);
        // The lane made no call that waits without a bound.
        assert_eq!(pg.executed("queen.push_text("), 0);
    }

    #[tokio::test]
    async fn a_request_that_waits_on_a_held_lock_gives_the_lane_back_and_waits_alone() {
        let pg = a_held_partition().await;
        let config = config(&[("DATABASE_URL", pg.url().as_str())]);
        let (fusion, lanes) = running(&config);
        let own = crate::db::pool(&config, 1).unwrap();
        let answer = fusion.submit(&config, &own, push_job(0)).await;
        assert_eq!(answer.ok().unwrap().unwrap(), r#"[{"index":0}]"#);
        // The bounded call on the idle lane was refused (the server scripts
        // 55P03 for it): the answer is its own unbounded call's.
        assert_eq!(pg.executed("queen.push_text("), 1);
        assert_eq!(
            fusion.gates[Kind::Push as usize]
                .inflight
                .load(Ordering::Relaxed),
            0
        );
        stop(fusion, lanes).await;
    }

    #[tokio::test]
    async fn a_request_whose_deadline_passed_in_the_lane_is_answered_unapplied() {
        // The fused call answers two requests: it must hold the other two.
        let pg = answering_two_fused().await;
        let lane = lane(&pg.url());
        let (mut batch, replies) = pushes(3);
        batch[1].deadline = Instant::now() - Duration::from_millis(1);
        lane.serve(batch, lane.claimed()).await;
        let answers: Vec<_> = futures_answers(replies).await;
        let e = answers[1].as_ref().unwrap_err();
        assert_eq!(e.status.as_u16(), 503);
        assert!(e.message.contains("not applied"), "{}", e.message);
        for k in [0, 2] {
            assert_eq!(answers[k].as_ref().unwrap(), r#"[{"index":0}]"#);
        }
        // The two others went as one call; the expired one reached nothing.
        assert_eq!(pg.executed("queen.push_fused("), 1);
    }

    /// Each reply's answer, in order.
    async fn futures_answers(replies: Replies) -> Vec<Result<String, ApiError>> {
        let mut out = Vec::new();
        for r in replies {
            out.push(answer(r.await.unwrap()));
        }
        out
    }

    #[tokio::test]
    async fn with_fusion_off_or_its_lanes_not_running_the_job_comes_back() {
        let job = || Job::Ack { body: "{}".into() };
        let off = config(&[("QUEEN_FUSION", "off")]);
        let pool = crate::db::pool(&off, 1).unwrap();
        let fusion = Fusion::new(&off.fusion, Arc::default());
        assert!(matches!(
            fusion.submit(&off, &pool, job()).await,
            Err(Job::Ack { .. })
        ));
        let on = config(&[]);
        let fusion = Fusion::new(&on.fusion, Arc::default());
        assert!(matches!(
            fusion.submit(&on, &pool, job()).await,
            Err(Job::Ack { .. })
        ));
    }

    /// A server that answers every `queen.push_text` call.
    /// A server whose every `queen.push_fused` call answers two pushes.
    async fn answering_two_fused() -> FakePg {
        FakePg::start(vec![(
            "queen.push_fused(",
            Reply::text(
                &[1001, 1000, 1009],
                r#"[{"ok":[{"index":0}]},{"ok":[{"index":0}]}]"#,
            ),
        )])
        .await
    }

    async fn answering_push_text() -> FakePg {
        FakePg::start(vec![(
            "queen.push_text(",
            Reply::text(&[TEXT, TEXT], r#"[{"index":0}]"#),
        )])
        .await
    }

    fn push_job(k: usize) -> Job {
        Job::Push {
            body: Bytes::from(format!(r#"[{{"queue": "q", "payload": {k}}}]"#)),
            binary: false,
            producer: None,
        }
    }

    #[tokio::test]
    async fn a_request_to_an_idle_lane_makes_its_own_call_on_its_threads_connections() {
        let pg = answering_push_text().await;
        let nowhere = config(&[("DATABASE_URL", UNREACHABLE)]);
        let config = config(&[("DATABASE_URL", pg.url().as_str())]);
        let fusion = Fusion::new(&config.fusion, Arc::default());
        // The lanes' own connections go nowhere: the call must not use them.
        let lanes = fusion.spawn(crate::db::pool(&nowhere, 1).unwrap());
        let lanes = lanes.unwrap().unwrap();
        let own = crate::db::pool(&config, 1).unwrap();
        for k in 0..3 {
            let answer = fusion.submit(&config, &own, push_job(k)).await;
            assert_eq!(answer.ok().unwrap().unwrap(), r#"[{"index":0}]"#);
        }
        assert_eq!(pg.executed("queen.push_text("), 3);
        let stats = fusion.stats.lane(Kind::Push);
        assert_eq!(stats.calls.load(Ordering::Relaxed), 3);
        assert_eq!(
            fusion.gates[Kind::Push as usize]
                .inflight
                .load(Ordering::Relaxed),
            0
        );
        stop(fusion, lanes).await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn requests_of_every_thread_gather_in_the_lane_while_a_call_is_out_and_go_as_one() {
        let fused = r#"[{"ok":[{"index":0}]},{"ok":[{"index":0}]}]"#;
        let pg = FakePg::start(vec![(
            "queen.push_fused(",
            Reply::text(&[1001, 1000, 1009], fused),
        )])
        .await;
        let config = config(&[("DATABASE_URL", pg.url().as_str())]);
        let (fusion, lanes) = running(&config);
        // A call of the lane's kind is out: what comes now waits in the lane.
        let gate = &fusion.gates[Kind::Push as usize];
        assert!(gate.claim(1));
        // Two event-loop threads, each its own runtime and connections.
        let servers: Vec<_> = (0..2)
            .map(|k| {
                let (fusion, config) = (fusion.clone(), config.clone());
                std::thread::spawn(move || {
                    let rt = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build()
                        .unwrap();
                    rt.block_on(async move {
                        let own = crate::db::pool(&config, 1).unwrap();
                        match fusion.submit(&config, &own, push_job(k)).await {
                            Ok(answer) => answer.unwrap(),
                            Err(_) => panic!("the lanes are running"),
                        }
                    })
                })
            })
            .collect();
        // Counted waiting before it is queued: wait for both in the queue.
        while gate.queued().len() < 2 {
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
        // The call out ends: the two go together.
        gate.release();
        for s in servers {
            assert_eq!(s.join().unwrap(), r#"[{"index":0}]"#);
        }
        assert_eq!(pg.executed("queen.push_fused("), 1);
        let stats = fusion.stats.lane(Kind::Push);
        assert_eq!(stats.requests.load(Ordering::Relaxed), 2);
        assert_eq!(stats.largest_call.load(Ordering::Relaxed), 2);
        stop(fusion, lanes).await;
    }

    #[tokio::test]
    async fn a_request_of_alone_bytes_makes_its_own_call_while_the_lane_is_busy() {
        let pg = answering_push_text().await;
        let nowhere = config(&[("DATABASE_URL", UNREACHABLE)]);
        let body = push_job(0);
        let alone = body.bytes();
        let config = config(&[
            ("DATABASE_URL", pg.url().as_str()),
            ("QUEEN_FUSION_ALONE_BYTES", alone.to_string().as_str()),
        ]);
        let fusion = Fusion::new(&config.fusion, Arc::default());
        // The lanes' own connections go nowhere: the call must not use them.
        let lanes = fusion
            .spawn(crate::db::pool(&nowhere, 1).unwrap())
            .unwrap()
            .unwrap();
        // A call of the lane's kind is out and never ends in this test.
        let gate = &fusion.gates[Kind::Push as usize];
        assert!(gate.claim(1));
        let own = crate::db::pool(&config, 1).unwrap();
        // As large as the setting: its own call, at once.
        let answer = fusion.submit(&config, &own, body).await;
        assert_eq!(answer.ok().unwrap().unwrap(), r#"[{"index":0}]"#);
        assert_eq!(pg.executed("queen.push_text("), 1);
        assert_eq!(gate.inflight.load(Ordering::Relaxed), 1);
        // One byte smaller: it waits in the lane for the call out.
        let small = Job::Push {
            body: Bytes::from(" ".repeat(alone - 1)),
            binary: false,
            producer: None,
        };
        let waiting = tokio::time::timeout(
            std::time::Duration::from_millis(300),
            fusion.submit(&config, &own, small),
        )
        .await;
        assert!(waiting.is_err(), "a smaller request must wait in the lane");
        assert_eq!(pg.executed("queen.push_text("), 1);
        let stats = fusion.stats.lane(Kind::Push);
        assert_eq!(stats.calls.load(Ordering::Relaxed), 1);
        gate.release();
        stop(fusion, lanes).await;
    }

    #[tokio::test]
    async fn with_fusion_off_no_lane_thread_starts() {
        let off = config(&[("QUEEN_FUSION", "off")]);
        let fusion = Fusion::new(&off.fusion, Arc::default());
        let pool = crate::db::pool(&off, 1).unwrap();
        assert!(fusion.spawn(pool).is_none());
    }

    #[tokio::test]
    async fn a_refused_call_holds_its_slot_until_its_requests_are_made_again() {
        let pg = FakePg::start(vec![
            (
                "queen.push_fused(",
                Reply::error("40P01", "deadlock detected"),
            ),
            ("queen.push_text(", Reply::Hang),
        ])
        .await;
        let lane = Arc::new(lane(&pg.url()));
        let (batch, _replies) = pushes(3);
        let serving = Arc::clone(&lane);
        let task = tokio::spawn(async move {
            let slot = serving.claimed();
            serving.serve(batch, slot).await;
        });
        // Refused, and its first request made again and hanging: a later
        // call taking the slot now could overtake the retries and reorder a
        // partition's messages.
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        assert!(!task.is_finished());
        assert_eq!(lane.gate().inflight.load(Ordering::Acquire), 1);
        task.abort();
        let _ = task.await;
        assert_eq!(lane.gate().inflight.load(Ordering::Acquire), 0);
    }

    #[tokio::test]
    async fn a_fused_call_gives_its_slot_back_once_answered() {
        let pg = answering_two_fused().await;
        let lane = lane(&pg.url());
        serve_pushes(&lane, 2, r#"[{"index":0}]"#).await;
        assert_eq!(lane.gate().inflight.load(Ordering::Acquire), 0);
    }

    #[tokio::test]
    async fn a_lone_request_makes_its_own_call() {
        let pg = FakePg::start(vec![(
            "queen.push_text(",
            Reply::text(&[TEXT, TEXT], r#"[{"index":0}]"#),
        )])
        .await;
        let lane = lane(&pg.url());
        serve_pushes(&lane, 1, r#"[{"index":0}]"#).await;
        assert_eq!(pg.executed("queen.push_fused("), 0);
    }

    #[tokio::test]
    async fn without_a_database_every_request_is_answered_unavailable_and_not_retried() {
        let lane = lane(UNREACHABLE);
        let (batch, replies) = pushes(3);
        lane.serve(batch, lane.claimed()).await;
        for r in replies {
            let e = answer(r.await.unwrap()).unwrap_err();
            assert_eq!(e.status.as_u16(), 503);
        }
        let stats = lane.stats.lane(Kind::Push);
        assert_eq!(stats.retried_calls.load(Ordering::Relaxed), 0);
        assert_eq!(stats.calls.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_calls_answers_reach_each_thread_as_one_delivery() {
        let (one, mut one_rx) = mpsc::unbounded_channel();
        let (two, mut two_rx) = mpsc::unbounded_channel();
        let (pending, mut replies) = pushes(5);
        let homes = [Some(&one), Some(&two), Some(&one), None, Some(&two)];
        let answers = pending
            .into_iter()
            .zip(homes)
            .enumerate()
            .map(|(k, (mut p, h))| {
                p.home = h.map(|h| Home(h.clone()));
                (p, Ok(format!("answer {k}")))
            });
        deliver(answers);
        // The request waiting on no mailbox is answered at once.
        assert_eq!(answer(replies[3].try_recv().unwrap()).unwrap(), "answer 3");
        for (rx, expected) in [(&mut one_rx, [0, 2]), (&mut two_rx, [1, 4])] {
            let delivery = rx.try_recv().expect("one delivery");
            assert!(rx.try_recv().is_err(), "a second delivery to one thread");
            assert_eq!(delivery.len(), 2);
            for (reply, a) in delivery {
                assert!(reply.send(super::Outcome::Answered(a)).is_ok());
            }
            for k in expected {
                assert_eq!(
                    answer(replies[k].try_recv().unwrap()).unwrap(),
                    format!("answer {k}")
                );
            }
        }
    }

    #[test]
    fn answers_for_a_thread_whose_mailbox_is_gone_are_sent_straight() {
        let (gone, rx) = mpsc::unbounded_channel();
        drop(rx);
        let (pending, mut replies) = pushes(2);
        deliver(pending.into_iter().map(|mut p| {
            p.home = Some(Home(gone.clone()));
            (p, Err(ApiError::internal()))
        }));
        for r in &mut replies {
            assert!(answer(r.try_recv().unwrap()).is_err());
        }
    }

    #[test]
    fn a_fused_answer_splits_into_each_requests_answer() {
        let text = r#"[{"ok":[{"index":0,"queue":"q"}]},{"sqlstate":"22023","error":"items: bad","detail":null},{"ok":{"a":1}}]"#;
        let answers = split(text, 3).unwrap();
        assert_eq!(
            got(&answers[0]).as_ref().unwrap(),
            r#"[{"index":0,"queue":"q"}]"#
        );
        let refused = got(&answers[1]).as_ref().unwrap_err();
        assert_eq!(refused.status.as_u16(), 400);
        assert_eq!(refused.message, "items: bad");
        assert_eq!(refused.sqlstate.as_deref(), Some("22023"));
        assert_eq!(got(&answers[2]).as_ref().unwrap(), r#"{"a":1}"#);
    }

    #[test]
    fn a_request_that_waited_on_a_lock_past_the_bound_is_told_apart() {
        let text =
            r#"[{"sqlstate":"55P03","error":"canceling statement due to lock timeout"},{"ok":1}]"#;
        let answers = split(text, 2).unwrap();
        assert!(matches!(answers[0], super::Got::LockWait));
        assert_eq!(got(&answers[1]).as_ref().unwrap(), "1");
    }

    #[test]
    fn a_paused_surface_keeps_its_code_and_retry_after() {
        let text = r#"[{"sqlstate":"57000","error":"paused","detail":"kv"}]"#;
        let refused = got(&split(text, 1).unwrap()[0]).clone().unwrap_err();
        assert_eq!(refused.status.as_u16(), 503);
        assert_eq!(refused.code, "kv_disabled");
        assert_eq!(refused.headers.len(), 1);
    }

    #[test]
    fn an_answer_of_the_wrong_length_is_a_fault() {
        assert!(split(r#"[{"ok":1}]"#, 2).is_err());
        assert!(split("not json", 1).is_err());
    }
}
