//! Request fusion: small requests of one kind (pushes, acks, lease
//! renewals) that arrive while calls of that kind are in flight go to the
//! database together, as one call of the extension's fused functions
//! (`queen.push_fused`, `queen.ack_fused`, `queen.renew_fused`), one
//! transaction and one commit for all of them.
//!
//! Each event-loop thread has one lane per kind. A lane with a free call
//! slot sends what it holds at once, so a lone request waits for nothing;
//! while `max_inflight` calls are out, arrivals gather and go as the next
//! call, up to `max_items` requests and `max_bytes` of bodies. A call of one
//! request is the request's own call, as with fusion off. Every request gets
//! the answer it would have got alone: the extension answers each on its
//! own, refusing a bad one alone while the others commit. When a fused call
//! fails as a whole (a deadlock, a serialization failure, a lock or
//! statement timeout), every request in it is made again on its own.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use deadpool_postgres::Pool;
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot, Semaphore};
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
        match self {
            Job::Push {
                body,
                binary: true,
                producer,
            } => {
                let sql = "SELECT queen.push_binary($1, $2)::text";
                db::one_value(pool, left, sql, &[&body.as_ref(), producer]).await
            }
            Job::Push { body, producer, .. } => {
                let text = std::str::from_utf8(body)
                    .map_err(|_| ApiError::bad_request("malformed JSON body: not UTF-8"))?;
                let sql = "SELECT queen.push_text($1, $2)::text";
                db::one_value(pool, left, sql, &[&text, producer]).await
            }
            Job::Ack { body } => {
                db::one_value(pool, left, "SELECT queen.ack_text($1)::text", &[body]).await
            }
            Job::Renew { lease, seconds } => {
                let sql = "SELECT queen.renew_lease($1, $2)::text";
                db::one_value(pool, left, sql, &[lease, seconds]).await
            }
        }
    }
}

/// A request waiting in its lane, with where its answer goes.
struct Pending {
    job: Job,
    /// The request's own deadline (its request timeout from when it came).
    deadline: Instant,
    reply: oneshot::Sender<Result<String, ApiError>>,
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

/// The upper bounds of the call size histogram, in requests per call
/// (the last one is the most a fused call takes).
pub const CALL_SIZE_BOUNDS: [u64; 11] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1000];

impl LaneStats {
    /// Counts one call of `requests` requests.
    fn observe(&self, requests: usize) {
        let n = requests as u64;
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

/// One event-loop thread's lanes; cloned into each request it serves.
#[derive(Clone)]
pub struct Fusion {
    /// None with fusion off.
    senders: Option<Vec<mpsc::UnboundedSender<Pending>>>,
    /// The lanes' ends, until `start` runs them.
    receivers: Arc<Mutex<Vec<mpsc::UnboundedReceiver<Pending>>>>,
    /// Whether `start` ran: until then requests make their own calls.
    started: Arc<AtomicBool>,
    config: FusionConfig,
    pub stats: Arc<Stats>,
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
            config: config.clone(),
            stats,
        }
    }

    /// Runs the lanes on the calling thread's runtime.
    pub fn start(&self, pool: &Pool) {
        let receivers = std::mem::take(&mut *self.receivers.lock().expect("lanes"));
        for (kind, rx) in Kind::ALL.into_iter().zip(receivers) {
            let lane = Lane {
                kind,
                pool: pool.clone(),
                config: self.config.clone(),
                stats: Arc::clone(&self.stats),
            };
            tokio::spawn(lane.run(rx));
        }
        self.started.store(true, Ordering::Release);
    }

    /// Whether requests go through the lanes.
    fn is_on(&self) -> bool {
        self.senders.is_some() && self.started.load(Ordering::Acquire)
    }

    /// Sends `job` through its lane and waits for its answer (the
    /// extension's JSON text). With fusion off the job comes back, for the
    /// caller to make the request's own call.
    pub async fn submit(&self, config: &Config, job: Job) -> Result<Result<String, ApiError>, Job> {
        let Some(senders) = self.senders.as_ref().filter(|_| self.is_on()) else {
            return Err(job);
        };
        let (reply, answer) = oneshot::channel();
        let pending = Pending {
            deadline: Instant::now() + config.request_timeout,
            reply,
            job,
        };
        // A lane that is gone (its thread stopping) hands the job back.
        if let Err(mpsc::error::SendError(p)) = senders[pending.job.kind() as usize].send(pending) {
            return Err(p.job);
        }
        Ok(answer.await.unwrap_or_else(|_| Err(ApiError::internal())))
    }
}

/// One lane: its kind, the thread's pool, the bounds.
struct Lane {
    kind: Kind,
    pool: Pool,
    config: FusionConfig,
    stats: Arc<Stats>,
}

impl Lane {
    /// Takes requests until every sender is gone: waits for a free call
    /// slot, then sends everything waiting, within the bounds, as one call.
    async fn run(self, mut rx: mpsc::UnboundedReceiver<Pending>) {
        let lane = Arc::new(self);
        let slots = Arc::new(Semaphore::new(lane.config.max_inflight));
        let mut carried: Option<Pending> = None;
        loop {
            let first = match carried.take() {
                Some(p) => p,
                None => match rx.recv().await {
                    Some(p) => p,
                    None => return,
                },
            };
            let Ok(slot) = Arc::clone(&slots).acquire_owned().await else {
                return;
            };
            let mut bytes = first.job.bytes();
            let mut batch = vec![first];
            while batch.len() < lane.config.max_items {
                let Ok(next) = rx.try_recv() else { break };
                if bytes + next.job.bytes() > lane.config.max_bytes {
                    carried = Some(next);
                    break;
                }
                bytes += next.job.bytes();
                batch.push(next);
            }
            let lane = Arc::clone(&lane);
            tokio::spawn(async move {
                lane.serve(batch).await;
                drop(slot);
            });
        }
    }

    /// Makes one call for `batch` and answers each request.
    async fn serve(&self, batch: Vec<Pending>) {
        let stats = self.stats.lane(self.kind);
        stats
            .requests
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        stats.calls.fetch_add(1, Ordering::Relaxed);
        stats.observe(batch.len());
        if batch.len() == 1 {
            let p = batch.into_iter().next().expect("one request");
            let answer = p.job.alone(&self.pool, left(p.deadline)).await;
            let _ = p.reply.send(answer);
            return;
        }
        match self.fused(&batch).await {
            Ok(answers) => {
                for (p, a) in batch.into_iter().zip(answers) {
                    let _ = p.reply.send(a);
                }
            }
            // Refused as a whole by the server: nothing of it committed;
            // each request is made again on its own.
            Err(Failed::Refused(_)) => {
                stats.retried_calls.fetch_add(1, Ordering::Relaxed);
                stats.calls.fetch_add(batch.len() as u64, Ordering::Relaxed);
                // One after the other, in the order the lane took them:
                // the order of the messages per partition is kept.
                for p in batch {
                    let answer = p.job.alone(&self.pool, left(p.deadline)).await;
                    let _ = p.reply.send(answer);
                }
            }
            // No database, or out of time: every request is answered so.
            Err(Failed::Other(e)) => {
                for p in batch {
                    let _ = p.reply.send(Err(e.clone()));
                }
            }
        }
    }

    /// The fused call for `batch`: one answer per request.
    async fn fused(&self, batch: &[Pending]) -> Result<Vec<Result<String, ApiError>>, Failed> {
        let left = left(batch.iter().map(|p| p.deadline).min().expect("a batch"));
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
                db::try_value(&self.pool, left, sql, &params).await?
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
                db::try_value(&self.pool, left, sql, &[&bodies]).await?
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
                db::try_value(&self.pool, left, sql, &[&leases, &seconds]).await?
            }
        };
        split(&text, batch.len()).map_err(Failed::Other)
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

/// A fused call's answer as one answer per request.
fn split(text: &str, requests: usize) -> Result<Vec<Result<String, ApiError>>, ApiError> {
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
            Some(answer) => Ok(answer.get().to_owned()),
            None => Err(ApiError::from_sql(
                e.sqlstate.as_deref().unwrap_or("XX000"),
                e.error.as_deref().unwrap_or("error"),
                e.detail.as_deref(),
            )),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::sync::Arc;

    use axum::body::Bytes;
    use tokio::sync::oneshot;
    use tokio::time::Instant;

    use super::{split, Fusion, Job, Kind, Lane, Pending, Stats};
    use crate::tests::fakepg::{FakePg, Reply, TEXT};
    use crate::tests::{config, UNREACHABLE};

    fn lane(url: &str) -> Lane {
        let config = config(&[("DATABASE_URL", url), ("QUEEN_POOL_SIZE", "4")]);
        Lane {
            kind: Kind::Push,
            pool: crate::db::pool(&config, 4).unwrap(),
            config: config.fusion.clone(),
            stats: Arc::new(Stats::default()),
        }
    }

    type Replies = Vec<oneshot::Receiver<Result<String, crate::error::ApiError>>>;

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
                    },
                    answer,
                )
            })
            .unzip()
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
        let (batch, replies) = pushes(3);
        lane.serve(batch).await;
        for r in replies {
            assert_eq!(r.await.unwrap().unwrap(), r#"[{"index":0}]"#);
        }
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

    #[tokio::test]
    async fn with_fusion_off_or_its_lanes_not_running_the_job_comes_back() {
        let job = || Job::Ack { body: "{}".into() };
        let off = config(&[("QUEEN_FUSION", "off")]);
        let fusion = Fusion::new(&off.fusion, Arc::default());
        assert!(matches!(
            fusion.submit(&off, job()).await,
            Err(Job::Ack { .. })
        ));
        let on = config(&[]);
        let fusion = Fusion::new(&on.fusion, Arc::default());
        assert!(matches!(
            fusion.submit(&on, job()).await,
            Err(Job::Ack { .. })
        ));
    }

    #[tokio::test]
    async fn a_lone_request_makes_its_own_call() {
        let pg = FakePg::start(vec![(
            "queen.push_text(",
            Reply::text(&[TEXT, TEXT], r#"[{"index":0}]"#),
        )])
        .await;
        let lane = lane(&pg.url());
        let (batch, replies) = pushes(1);
        lane.serve(batch).await;
        for r in replies {
            assert_eq!(r.await.unwrap().unwrap(), r#"[{"index":0}]"#);
        }
        assert_eq!(pg.executed("queen.push_fused("), 0);
    }

    #[tokio::test]
    async fn without_a_database_every_request_is_answered_unavailable_and_not_retried() {
        let lane = lane(UNREACHABLE);
        let (batch, replies) = pushes(3);
        lane.serve(batch).await;
        for r in replies {
            let e = r.await.unwrap().unwrap_err();
            assert_eq!(e.status.as_u16(), 503);
        }
        let stats = lane.stats.lane(Kind::Push);
        assert_eq!(stats.retried_calls.load(Ordering::Relaxed), 0);
        assert_eq!(stats.calls.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn a_fused_answer_splits_into_each_requests_answer() {
        let text = r#"[{"ok":[{"index":0,"queue":"q"}]},{"sqlstate":"22023","error":"items: bad","detail":null},{"ok":{"a":1}}]"#;
        let answers = split(text, 3).unwrap();
        assert_eq!(answers[0].as_ref().unwrap(), r#"[{"index":0,"queue":"q"}]"#);
        let refused = answers[1].as_ref().unwrap_err();
        assert_eq!(refused.status.as_u16(), 400);
        assert_eq!(refused.message, "items: bad");
        assert_eq!(refused.sqlstate.as_deref(), Some("22023"));
        assert_eq!(answers[2].as_ref().unwrap(), r#"{"a":1}"#);
    }

    #[test]
    fn a_paused_surface_keeps_its_code_and_retry_after() {
        let text = r#"[{"sqlstate":"57000","error":"paused","detail":"kv"}]"#;
        let refused = split(text, 1).unwrap().remove(0).unwrap_err();
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
