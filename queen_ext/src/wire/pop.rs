//! Pop requests and answers: a pop's arguments and options checked into a
//! request, and what it claimed answered as JSON (written by hand, the
//! payloads copied as stored) or as a framed pop body (QPF1).

use queen_frames::pop_body::{PopAnswer, PopClaim, PopRecord, CODEC_ZSTD};
use serde_json::Value;

use crate::pg::errors;
use crate::pg::settings;
use crate::pg::time::micros_to_iso;
use crate::wire::json::{check_name, Obj};
use crate::wire::segment::Segment;
use crate::wire::QUEUE_MODE;

/// How a new consumer group's cursor starts on a partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subscription {
    /// From the oldest message still kept.
    All,
    /// From messages written after the group first subscribed.
    New,
    /// From messages written at or after the timestamp (ISO 8601 text).
    From(String),
}

#[derive(Debug, Clone)]
pub struct PopRequest {
    pub queue: Option<String>,
    pub partition: Option<String>,
    pub group: String,
    pub batch: i64,
    pub partitions: i64,
    pub auto_ack: bool,
    pub subscription: Subscription,
    pub namespace: Option<String>,
    pub task: Option<String>,
    /// Set for an autopilot pop (`options.autopilot`): what the server chose
    /// for the batch and the width the caller left unset, echoed in the
    /// answer as `"autopilot": {"partitions", "batch"}`.
    pub autopilot: Option<Autopilot>,
    /// The pop asks for conflation (`options.conflation`): of each
    /// partition, only the newest message is delivered and the older ones
    /// are completed.
    pub conflation: bool,
}

/// The choices of an autopilot pop: the batch (the caller's, or
/// `queen.pop_autopilot_batch`) and the most partitions it may claim (the
/// caller's, or `queen.pop_autopilot_partitions`). It claims as many of
/// them as have messages waiting, until the batch is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Autopilot {
    pub batch: i64,
    pub partitions: i64,
}

impl PopRequest {
    pub fn parse(
        queue: Option<&str>,
        partition: Option<&str>,
        consumer_group: Option<&str>,
        batch: Option<i32>,
        options: &Value,
    ) -> PopRequest {
        let o = Obj::new(options, "options");
        let autopilot = o.opt_bool("autopilot").unwrap_or(false);
        let queue = queue.map(|q| check_name("queue", q).to_owned());
        let partition = partition.map(|p| check_name("partition", p).to_owned());
        let group = consumer_group
            .map(|g| check_name("consumer_group", g))
            .unwrap_or(QUEUE_MODE)
            .to_owned();
        let batch = checked_batch(batch, autopilot);
        let conflation = o.opt_bool("conflation").unwrap_or(false);
        let auto_ack = o.opt_bool("autoAck").unwrap_or(false);
        if conflation && auto_ack {
            errors::invalid(
                &o.field("conflation"),
                "can not be combined with autoAck: a conflated batch is completed by its ack",
            );
        }
        let partitions = Width {
            one_partition: partition.is_some(),
            conflation,
            autopilot,
            batch,
        }
        .checked(&o);
        let namespace = o.opt_name("namespace").map(str::to_owned);
        let task = o.opt_name("task").map(str::to_owned);
        if queue.is_none() && namespace.is_none() && task.is_none() {
            errors::invalid(
                "queue",
                "is required unless options.namespace or options.task is given",
            );
        }
        if queue.is_none() && partition.is_some() {
            errors::invalid("partition", "needs a queue");
        }
        let subscription = subscription(&o);
        PopRequest {
            queue,
            partition,
            group,
            batch,
            partitions,
            auto_ack,
            subscription,
            namespace,
            task,
            autopilot: autopilot.then_some(Autopilot { batch, partitions }),
            conflation,
        }
    }
}

/// A pop's batch, checked: the caller's, else the autopilot's or 1.
fn checked_batch(batch: Option<i32>, autopilot: bool) -> i64 {
    let batch = match batch {
        Some(b) => b as i64,
        None if autopilot => settings::pop_autopilot_batch(),
        None => 1,
    };
    let max_batch = settings::pop_max_batch();
    if batch <= 0 {
        errors::invalid("batch", format!("{batch} must be at least 1"));
    }
    if batch > max_batch {
        errors::invalid(
            "batch",
            format!("{batch} is more than queen.pop_max_batch ({max_batch})"),
        );
    }
    batch
}

/// What a pop's default width (`options.partitions` left unset) depends on.
struct Width {
    /// The pop names one partition.
    one_partition: bool,
    conflation: bool,
    autopilot: bool,
    batch: i64,
}

impl Width {
    /// The most partitions the pop may claim, checked: `options.partitions`,
    /// else the default for the pop.
    fn checked(&self, o: &Obj<'_>) -> i64 {
        let partitions = match o.opt_i64("partitions") {
            Some(p) => p,
            // A pop of one named partition claims only that one.
            None if self.one_partition => 1,
            // A conflated partition yields one message: as many partitions
            // as the batch holds messages.
            None if self.conflation => self.batch.min(settings::pop_max_partitions()),
            None if self.autopilot => settings::pop_autopilot_partitions(),
            None => 1,
        };
        let max_parts = settings::pop_max_partitions();
        if partitions <= 0 || partitions > max_parts {
            errors::invalid(
                &o.field("partitions"),
                format!("{partitions} is not between 1 and queen.pop_max_partitions ({max_parts})"),
            );
        }
        partitions
    }
}

/// How a new group's cursor starts, from `options.subscriptionFrom` (a
/// timestamp, or `now`) or else `options.subscriptionMode`.
fn subscription(o: &Obj<'_>) -> Subscription {
    let from = o.opt_str("subscriptionFrom").filter(|s| !s.is_empty());
    match (o.opt_str("subscriptionMode"), from) {
        (_, Some("now")) => Subscription::New,
        (_, Some(ts)) => {
            let looks_like_date = ts.len() >= 10
                && ts.as_bytes()[..4].iter().all(u8::is_ascii_digit)
                && ts.as_bytes()[4] == b'-';
            if !looks_like_date {
                errors::invalid(
                    &o.field("subscriptionFrom"),
                    format!("{ts:?} is not 'now' or an ISO 8601 timestamp"),
                );
            }
            Subscription::From(ts.to_owned())
        }
        // `from_beginning`, `earliest` and `beginning` are what Queen's own
        // clients, tests and docs send for all.
        (None | Some("all" | "" | "from_beginning" | "earliest" | "beginning"), None) => {
            Subscription::All
        }
        (Some("new") | Some("new-only") | Some("latest"), None) => Subscription::New,
        (Some(other), None) => errors::invalid(
            &o.field("subscriptionMode"),
            format!("{other:?} is not one of all, new"),
        ),
    }
}

/// What one claimed partition handed out.
pub struct Claim {
    pub partition_id: i64,
    pub partition: String,
    pub queue: String,
    pub start: i64,
    pub end: i64,
    pub delivery_attempt: i32,
    pub segments: Vec<Segment>,
    /// Offsets inside start..=end that were deleted, in order: leased done,
    /// never delivered.
    pub skip: Vec<i64>,
}

impl Claim {
    /// The messages it delivers: its range less the deleted offsets in it.
    pub fn delivered(&self) -> i64 {
        self.end - self.start + 1 - self.skip.len() as i64
    }

    /// The runs of start..=end that are delivered: the whole range, split
    /// around the deleted offsets.
    pub fn runs(&self) -> Vec<(i64, i64)> {
        let mut runs = Vec::new();
        let mut from = self.start;
        for &o in &self.skip {
            if o > from {
                runs.push((from, o - 1));
            }
            from = o + 1;
        }
        if from <= self.end {
            runs.push((from, self.end));
        }
        runs
    }
}

pub struct PopOut {
    pub lease_id: Option<uuid::Uuid>,
    pub group: String,
    pub claims: Vec<Claim>,
    /// An autopilot pop's choices, echoed in the answer.
    pub autopilot: Option<Autopilot>,
    /// What became of a pop that asked for conflation.
    pub conflation: Option<Conflated>,
}

/// A conflating pop's outcome, answered as `"conflation": true` (applied),
/// `"conflationConflict": true` (the group's stored policy differs from the
/// request's) and `"conflated"` (older messages it completed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Conflated {
    pub applied: bool,
    pub conflict: bool,
    pub completed: i64,
}

impl Conflated {
    /// Writes its fields of the answer's head.
    fn write(&self, out: &mut String) {
        if self.applied {
            out.push_str(",\"conflation\":true,\"conflated\":");
            crate::wire::json::write_int(out, self.completed);
        }
        if self.conflict {
            out.push_str(",\"conflationConflict\":true");
        }
    }
}

impl PopOut {
    /// The JSON answer: `{"success", "queue", "partition", "partitionId",
    /// "leaseId", "consumerGroup", "partitionsClaimed", "messages": [...]}`,
    /// each message with id, transactionId, traceId, data, producerSub,
    /// createdAt, queue, partition, partitionId, offset, leaseId,
    /// consumerGroup, deliveryAttempt and retryCount. Written field by field
    /// into a buffer sized once (serde's struct machinery was 40% of a pop of
    /// 100). Payloads are copied as stored: every write path (JSON and
    /// binary pushes, packed frames, transactions, timers) refuses one that
    /// is not one JSON document, and checking again here was a third of
    /// writing the answer.
    pub fn to_json_text(&self) -> String {
        use crate::wire::json::{write_int, write_opt_str};
        let lease = self.lease_id.map(|l| l.to_string());
        let group = (self.group != QUEUE_MODE).then_some(self.group.as_str());
        // What every message of the answer repeats, written once.
        let mut tail = String::from(",\"leaseId\":");
        write_opt_str(&mut tail, lease.as_deref());
        tail.push_str(",\"consumerGroup\":");
        write_opt_str(&mut tail, group);
        let first = self.claims.first();
        // Sized once: the frames' bytes, and a message's fields around each.
        const PER_MESSAGE: usize = 300;
        let size: usize = self
            .claims
            .iter()
            .map(|c| {
                c.segments.iter().map(|s| s.raw().len()).sum::<usize>()
                    + PER_MESSAGE * (c.end - c.start + 1) as usize
            })
            .sum();
        let mut out = String::with_capacity(size + 256);
        out.push_str("{\"success\":true,\"queue\":");
        write_opt_str(&mut out, first.map(|c| c.queue.as_str()));
        out.push_str(",\"partition\":");
        write_opt_str(&mut out, first.map(|c| c.partition.as_str()));
        out.push_str(",\"partitionId\":");
        match first {
            Some(c) => {
                out.push('"');
                write_int(&mut out, c.partition_id);
                out.push('"');
            }
            None => out.push_str("null"),
        }
        out.push_str(&tail);
        out.push_str(",\"partitionsClaimed\":");
        write_int(&mut out, self.claims.len() as i64);
        if let Some(a) = &self.autopilot {
            write_autopilot(&mut out, a);
        }
        if let Some(c) = &self.conflation {
            c.write(&mut out);
        }
        out.push_str(",\"messages\":[");
        let mut written = 0usize;
        for c in &self.claims {
            write_claim(&mut out, c, &tail, &mut written);
        }
        out.push_str("]}");
        out
    }

    pub fn to_json(&self) -> Value {
        serde_json::from_str(&self.to_json_text()).expect("own answer parses")
    }

    /// The framed answer (QPF1): the stored segments as they are.
    pub fn to_frames(&self) -> Vec<u8> {
        let mut own = String::from("{\"frames\":true");
        if let Some(a) = &self.autopilot {
            write_autopilot(&mut own, a);
        }
        if let Some(c) = &self.conflation {
            c.write(&mut own);
        }
        own.push('}');
        let answer = PopAnswer {
            own_json: own.into_bytes(),
            queue: self
                .claims
                .first()
                .map(|c| c.queue.clone())
                .unwrap_or_default(),
            lease_id: self.lease_id.map(|l| l.to_string()).unwrap_or_default(),
            consumer_group: self.group.clone(),
            // A claim with deleted offsets goes out as one claim per run
            // between them, each with the segments it reads.
            claims: self
                .claims
                .iter()
                .flat_map(|c| {
                    c.runs().into_iter().map(move |(start, end)| PopClaim {
                        partition_id: c.partition_id as u64,
                        partition: c.partition.clone(),
                        start: start as u64,
                        end: end as u64,
                        delivery_attempt: c.delivery_attempt as u32,
                        records: c
                            .segments
                            .iter()
                            .filter(|s| s.end_offset >= start && s.base_offset <= end)
                            .map(|s| PopRecord {
                                base_offset: s.base_offset as u64,
                                created_at_us: s.created_at_us,
                                count: s.count as u32,
                                codec: CODEC_ZSTD,
                                bytes: s.blob.clone(),
                            })
                            .collect(),
                    })
                })
                .collect(),
        };
        queen_frames::pop_body::encode_pop_answer(&answer)
            .unwrap_or_else(|e| errors::invalid("pop", e))
    }
}

/// Writes `,"autopilot":{"partitions":N,"batch":B}`.
fn write_autopilot(out: &mut String, a: &Autopilot) {
    use crate::wire::json::write_int;
    out.push_str(",\"autopilot\":{\"partitions\":");
    write_int(out, a.partitions);
    out.push_str(",\"batch\":");
    write_int(out, a.batch);
    out.push('}');
}

/// Writes the messages of one claim into a pop answer: `tail` is what every
/// message repeats (lease and group), `written` counts the messages so far.
fn write_claim(out: &mut String, c: &Claim, tail: &str, written: &mut usize) {
    use crate::wire::json::{write_int, write_opt_id, write_opt_str, write_str};
    // Per claim: what its messages share after createdAt.
    let mut shared = String::from(",\"queue\":");
    write_str(&mut shared, &c.queue);
    shared.push_str(",\"partition\":");
    write_str(&mut shared, &c.partition);
    shared.push_str(",\"partitionId\":\"");
    write_int(&mut shared, c.partition_id);
    shared.push_str("\",\"offset\":");
    let mut after_offset = tail.to_owned();
    after_offset.push_str(",\"deliveryAttempt\":");
    write_int(&mut after_offset, c.delivery_attempt as i64);
    after_offset.push_str(",\"retryCount\":");
    write_int(&mut after_offset, c.delivery_attempt as i64 - 1);
    after_offset.push('}');
    for seg in &c.segments {
        let created_at = micros_to_iso(seg.created_at_us);
        for (i, f) in seg.frames().enumerate() {
            let offset = seg.base_offset + i as i64;
            if offset < c.start || offset > c.end || c.skip.binary_search(&offset).is_ok() {
                continue;
            }
            if f.is_encrypted() {
                errors::corrupt(format!(
                    "message at offset {offset} of partition {} is encrypted and can not be decoded here",
                    c.partition_id
                ));
            }
            // Every write path checked the payload to be one JSON
            // document; it is copied as it is.
            let data = std::str::from_utf8(f.payload).unwrap_or_else(|_| {
                errors::corrupt(format!(
                    "message at offset {offset} of partition {}: payload is not UTF-8",
                    c.partition_id
                ))
            });
            if *written > 0 {
                out.push(',');
            }
            *written += 1;
            out.push_str("{\"id\":");
            write_opt_id(out, Some(&f.message_id));
            out.push_str(",\"transactionId\":");
            write_str(out, f.transaction_id);
            out.push_str(",\"traceId\":");
            write_opt_id(out, f.trace_id.as_ref());
            out.push_str(",\"data\":");
            out.push_str(data);
            out.push_str(",\"producerSub\":");
            write_opt_str(out, f.producer);
            out.push_str(",\"createdAt\":\"");
            out.push_str(&created_at);
            out.push('"');
            out.push_str(&shared);
            write_int(out, offset);
            out.push_str(&after_offset);
        }
    }
}
