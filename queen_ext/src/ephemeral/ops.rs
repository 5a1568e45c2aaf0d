//! The ephemeral verbs, in the shapes of Queen's `/api/v1/ephemeral/*`
//! answers: configure, reset, delete, push, pop, ack, and the two reads.
//! Every answer says `"durability": "unlogged"`: the contents are lost on a
//! crash. The writes are refused (57000) while the `ephemeral` switch is
//! off; the reads still answer.

use std::collections::BTreeSet;

use pgrx::spi::SpiClient;
use pgrx::JsonB;
use serde_json::{json, Value};

use super::expiry;
use super::leases::{self, Lease};
use super::options::{self, Effective, Policy};
use super::queue::{self, Part, State};
use super::{check_name, mint_id, parse_id, DEFAULT_PARTITION, QUEUE_MODE};
use crate::catalog::switches::{self, Surface};
use crate::pg::errors;
use crate::pg::settings;
use crate::pg::spi::{self, exec_keyed};
use crate::pg::time;
use crate::wire::json::Obj;

/// What every answer says of the contents.
pub const DURABILITY: &str = "unlogged";

fn declared(c: &mut SpiClient<'_>, queue: &str) -> Option<(Value, i64)> {
    exec_keyed(
        c,
        crate::query!("ephemeral_config_get"),
        &[spi::TEXT],
        &[queue.into()],
    )
    .next()
    .map(|r| {
        let JsonB(o) = spi::col::<JsonB>(&r, "options");
        let at = spi::col::<pgrx::datum::TimestampWithTimeZone>(&r, "updated_at");
        (o, time::finite_unix_us(at).unwrap_or(0))
    })
}

fn effective(c: &mut SpiClient<'_>, queue: &str) -> (bool, Effective) {
    let d = declared(c, queue);
    (d.is_some(), options::effective(d.as_ref().map(|(o, _)| o)))
}

/// Declares `queue` with `options` (the closed list; absent: the
/// defaults), replacing an earlier declaration.
pub fn configure(c: &mut SpiClient<'_>, queue: &str, options: &Value) -> Value {
    let queue = check_name("queue", queue);
    let stored = options::check(options);
    switches::refuse_if_paused(c, Surface::Ephemeral);
    let row = exec_keyed(
        c,
        crate::query!("ephemeral_config_set"),
        &[spi::TEXT, spi::JSONB],
        &[queue.into(), JsonB(stored).into()],
    )
    .next()
    .expect("the upsert answers its row");
    let JsonB(o) = spi::col::<JsonB>(&row, "options");
    let at = spi::col::<pgrx::datum::TimestampWithTimeZone>(&row, "updated_at");
    json!({
        "queue": queue,
        "options": o,
        "updatedAt": time::micros_to_iso(time::finite_unix_us(at).unwrap_or(0)),
        "tier": "declared",
        "effective": options::effective(Some(&o)).to_json(),
        "durability": DURABILITY,
    })
}

/// Drops every message, lease and cursor of `queue` (the declaration
/// stays): its incarnation ends, so ids it delivered answer `stale`.
pub fn reset(c: &mut SpiClient<'_>, queue: &str) -> Value {
    let queue = check_name("queue", queue);
    switches::refuse_if_paused(c, Surface::Ephemeral);
    let dropped = queue::retire(c, queue).unwrap_or(0);
    queue::cleanup_retired_step(c);
    json!({"queue": queue, "dropped": dropped, "durability": DURABILITY})
}

/// Deletes `queue`: its contents and its declaration.
pub fn delete(c: &mut SpiClient<'_>, queue: &str) -> Value {
    let queue = check_name("queue", queue);
    switches::refuse_if_paused(c, Surface::Ephemeral);
    let live = queue::retire(c, queue).is_some();
    let was_declared = exec_keyed(
        c,
        crate::query!("ephemeral_config_delete"),
        &[spi::TEXT],
        &[queue.into()],
    )
    .next()
    .is_some();
    queue::cleanup_retired_step(c);
    json!({"queue": queue, "deleted": live || was_declared, "declared": was_declared})
}

/// `{"queue", "partition"?, "messages": [{"payload"}]}`: all or nothing
/// (under dropOldest, a push larger than the bounds keeps its newest
/// messages and counts the others as dropped).
pub fn push(c: &mut SpiClient<'_>, body: &Value) -> Value {
    let o = Obj::new(body, "body");
    let queue = check_name("queue", o.req_str("queue"));
    let partition = o
        .opt_str("partition")
        .map_or(DEFAULT_PARTITION, |p| check_name("partition", p));
    let messages = o
        .opt_array("messages")
        .unwrap_or_else(|| errors::invalid("messages", "is required"));
    let max = settings::ephemeral_push_max_messages();
    if messages.len() > max {
        errors::invalid(
            "messages",
            format!("{} is more than the {max} one push takes", messages.len()),
        );
    }
    let mut batch = Batch::of(messages);
    if batch.texts.is_empty() {
        return json!({"pushed": 0});
    }
    switches::refuse_if_paused(c, Surface::Ephemeral);
    queue::cleanup_retired_step(c);
    let (is_declared, opts) = effective(c, queue);
    let accepted = batch.texts.len() as i64;
    batch.fit(&opts, queue);
    let mut s = queue::lock_or_create(c, queue);
    expiry::touch(c, s.incarnation, None, is_declared);
    s.drops_bounds += batch.dropped as i64;
    let mut p = queue::part_lock_or_create(c, s.incarnation, partition);
    queue::expire_step(c, &mut s, &mut p, opts.ttl_seconds);
    queue::reclaim_step(c, &mut s, &mut p);
    let n = batch.texts.len() as i64;
    let need_len = s.depth + n - opts.max_length;
    let need_bytes = s.bytes + batch.bytes - opts.max_bytes;
    if need_len > 0 || need_bytes > 0 {
        if opts.policy == Policy::Reject {
            errors::queue_full(format!(
                "{queue:?} holds {} messages ({} bytes): maxLength {}, maxBytes {}, policy reject",
                s.depth, s.bytes, opts.max_length, opts.max_bytes
            ));
        }
        make_room(c, &mut s, &mut p, need_len, need_bytes, queue);
    }
    batch.append(c, &mut s, &mut p, partition);
    queue::part_write(c, s.incarnation, &mut p);
    queue::write(c, &mut s);
    json!({"pushed": accepted})
}

/// The messages of one push: their payloads' JSON text and sizes, and what
/// fitting them to the queue's bounds dropped.
struct Batch {
    texts: Vec<String>,
    sizes: Vec<i32>,
    /// The bytes of the messages kept.
    bytes: i64,
    /// The oldest messages dropped to fit the bounds.
    dropped: usize,
}

impl Batch {
    /// The payloads of `messages`; each message must have one.
    fn of(messages: &[Value]) -> Batch {
        let mut texts = Vec::with_capacity(messages.len());
        let mut sizes = Vec::with_capacity(messages.len());
        for (i, m) in messages.iter().enumerate() {
            let Some(p) = m.as_object().and_then(|m| m.get("payload")) else {
                errors::invalid(&format!("messages[{i}].payload"), "is required");
            };
            let text = p.to_string();
            sizes.push(i32::try_from(text.len()).unwrap_or(i32::MAX));
            texts.push(text);
        }
        let bytes = sizes.iter().map(|&b| b as i64).sum();
        Batch {
            texts,
            sizes,
            bytes,
            dropped: 0,
        }
    }

    /// Fits the batch to the bounds of `queue` on its own, or refuses it.
    fn fit(&mut self, opts: &Effective, queue: &str) {
        let accepted = self.texts.len();
        // Under dropOldest a push larger than the bounds keeps its newest
        // messages; its oldest count as dropped. A message larger than maxBytes
        // fits under no policy.
        if opts.policy == Policy::DropOldest {
            while self.dropped < self.texts.len()
                && ((self.texts.len() - self.dropped) as i64 > opts.max_length
                    || self.bytes > opts.max_bytes)
            {
                self.bytes -= self.sizes[self.dropped] as i64;
                self.dropped += 1;
            }
            self.texts.drain(..self.dropped);
            self.sizes.drain(..self.dropped);
        }
        let n = self.texts.len() as i64;
        if n == 0 || n > opts.max_length || self.bytes > opts.max_bytes {
            errors::queue_full(format!(
                "a push of {accepted} messages is larger than the bounds of {queue:?} \
                 (maxLength {}, maxBytes {}, policy {})",
                opts.max_length,
                opts.max_bytes,
                opts.policy.as_str()
            ));
        }
    }

    /// Inserts the messages at the head of `partition`, and counts them in
    /// the partition's and the queue's gauges.
    fn append(self, c: &mut SpiClient<'_>, s: &mut State, p: &mut Part, partition: &str) {
        let n = self.texts.len() as i64;
        exec_keyed(
            c,
            crate::query!("ephemeral_push_insert"),
            &[
                spi::INT8,
                spi::TEXT,
                spi::INT8,
                spi::TEXT_ARRAY,
                spi::INT4_ARRAY,
            ],
            &[
                s.incarnation.into(),
                partition.into(),
                p.head.into(),
                self.texts.into(),
                self.sizes.into(),
            ],
        );
        p.head += n;
        p.depth += n;
        p.bytes += self.bytes;
        s.depth += n;
        s.bytes += self.bytes;
    }
}

/// Drops the oldest messages for a push under `dropOldest`: the pushed
/// partition's first, then the other partitions' by name.
fn make_room(
    c: &mut SpiClient<'_>,
    s: &mut State,
    target: &mut Part,
    need_len: i64,
    need_bytes: i64,
    queue: &str,
) {
    let (mut len, mut bytes) = queue::drop_oldest(c, s, target, need_len, need_bytes);
    if len > 0 || bytes > 0 {
        for other in queue::parts(c, s.incarnation, settings::ephemeral_list_max()) {
            if other.name == target.name {
                continue;
            }
            let Some(mut p) = queue::part_lock(c, s.incarnation, &other.name) else {
                continue;
            };
            (len, bytes) = queue::drop_oldest(c, s, &mut p, len, bytes);
            queue::part_write(c, s.incarnation, &mut p);
            if len <= 0 && bytes <= 0 {
                break;
            }
        }
    }
    if len > 0 || bytes > 0 {
        errors::queue_full(format!("{queue:?} could not make room for the push"));
    }
}

/// Where this backend's queue-wide pops of an ephemeral queue stand: for a
/// (queue, group), the last partition a pop visited. The next one starts
/// past it, so a queue of more partitions than one pop visits
/// (`queen.ephemeral_pop_max_partitions`) is served all round. A position is
/// only where the next pop starts; a lost one starts at the first name.
mod rounds {
    use std::cell::RefCell;
    use std::collections::HashMap;

    thread_local! {
        static AT: RefCell<HashMap<(String, String), String>> = RefCell::new(HashMap::new());
    }

    /// The last partition of `queue` a pop for `group` visited.
    pub(super) fn of(queue: &str, group: &str) -> Option<String> {
        AT.with_borrow(|at| at.get(&(queue.to_owned(), group.to_owned())).cloned())
    }

    /// Notes that a pop of `queue` for `group` visited `partition`.
    pub(super) fn visited(queue: &str, group: &str, partition: &str) {
        AT.with_borrow_mut(|at| crate::pg::kept::keep(at, queue, group, partition.to_owned()))
    }
}

/// A message handed out by a pop.
struct Delivery {
    seq: i64,
    attempts: i32,
    payload: String,
}

/// Up to `batch` messages for `group` (None: queue mode) from `partition`
/// (None: the queue's partitions by name). With `auto_ack` the cursor moves
/// past them and nothing is leased; otherwise each is leased for the
/// queue's leaseSeconds. An unknown queue is made live (implicit).
pub fn pop(
    c: &mut SpiClient<'_>,
    queue: &str,
    partition: Option<&str>,
    group: Option<&str>,
    batch: Option<i64>,
    auto_ack: bool,
) -> Value {
    let queue = check_name("queue", queue);
    let partition = partition
        .filter(|p| !p.is_empty())
        .map(|p| check_name("partition", p));
    let group = group
        .filter(|g| !g.is_empty())
        .map_or(QUEUE_MODE, |g| check_name("group", g));
    let batch = batch.unwrap_or(1);
    if batch < 1 {
        errors::invalid("batch", format!("{batch} is not at least 1"));
    }
    let batch = batch.min(settings::ephemeral_pop_max_batch());
    switches::refuse_if_paused(c, Surface::Ephemeral);
    queue::cleanup_retired_step(c);
    let (is_declared, opts) = effective(c, queue);
    let mut s = queue::lock_or_create(c, queue);
    expiry::touch(c, s.incarnation, Some(group), is_declared);
    let names: Vec<String> = match partition {
        Some(p) => vec![p.to_owned()],
        None => queue::parts_round(
            c,
            s.incarnation,
            rounds::of(queue, group).as_deref(),
            settings::ephemeral_pop_max_partitions(),
        ),
    };
    let mut out = Vec::new();
    for name in names {
        let want = batch - out.len() as i64;
        if want <= 0 {
            break;
        }
        if partition.is_none() {
            rounds::visited(queue, group, &name);
        }
        let Some(mut p) = queue::part_lock(c, s.incarnation, &name) else {
            continue;
        };
        let got = pop_partition(c, &mut s, &opts, &mut p, group, want, auto_ack);
        queue::part_write(c, s.incarnation, &mut p);
        for d in got {
            out.push(json!({
                "id": mint_id(s.incarnation, &p.name, d.seq),
                "partition": p.name,
                "attempts": d.attempts,
                "payload": serde_json::from_str::<Value>(&d.payload).unwrap_or(Value::Null),
            }));
        }
    }
    queue::write(c, &mut s);
    let mut answer = json!({"queue": queue, "messages": out});
    if opts.window_ms > 0 || opts.window_count > 0 {
        answer["windowBuffer"] = json!({"ms": opts.window_ms, "count": opts.window_count});
    }
    answer
}

/// Up to `want` messages of partition `p` for `group`: the leases that ran
/// out and the messages handed back first, then messages past the group's
/// cursor, which moves past them.
fn pop_partition(
    c: &mut SpiClient<'_>,
    s: &mut State,
    opts: &Effective,
    p: &mut Part,
    group: &str,
    want: i64,
    auto_ack: bool,
) -> Vec<Delivery> {
    let inc = s.incarnation;
    queue::expire_step(c, s, p, opts.ttl_seconds);
    let cursor = cursor_get(c, inc, &p.name, group);
    let (mut next, mut skipped) = cursor.map_or((p.tail, 0), |(_, n, k)| (n, k));
    if next < p.tail {
        skipped += p.tail - next;
        next = p.tail;
    }
    let key = (inc, p.name.as_str(), group);
    // Leases that ran out, and messages handed back, first.
    let mut h = Handout::default();
    s.drops_retry += h.take_due(c, key, want, p.tail, opts.retry_limit);
    let fresh_from = h.out.len();
    let more = want - h.out.len() as i64;
    if more > 0 {
        h.read_fresh(c, key, next, more);
    }
    if let Some(last) = h.out[fresh_from..].last() {
        next = last.seq + 1;
    }
    let out = h.settle(c, key, fresh_from, auto_ack, opts.lease_seconds);
    // A cursor is made on the group's first pop of the partition (the
    // reclaim waits for every group's), and moves only when it changed.
    let held = cursor.map(|(ver, _, _)| ver);
    if cursor.is_none_or(|(_, n, k)| (n, k) != (next, skipped)) {
        cursor_write(c, key, next, skipped, held);
    }
    queue::reclaim_step(c, s, p);
    out
}

/// What a pop of one partition hands out, and the leases it ends or
/// redelivers.
#[derive(Default)]
struct Handout {
    out: Vec<Delivery>,
    ended: Vec<Lease>,
    redelivered: Vec<Lease>,
}

impl Handout {
    /// Takes up to `want` leases that ran out or were handed back: each
    /// message is redelivered, or its lease ends when the message is gone or
    /// has used its `retry_limit` deliveries. Answers how many were dropped
    /// at the limit.
    fn take_due(
        &mut self,
        c: &mut SpiClient<'_>,
        key: (i64, &str, &str),
        want: i64,
        tail: i64,
        retry_limit: i64,
    ) -> i64 {
        let mut dropped = 0;
        for d in leases::due(c, key, want, tail) {
            let end = Lease {
                seq: d.seq,
                replaces: Some(d.ver),
                attempts: d.attempts,
            };
            match d.payload {
                None => self.ended.push(end),
                Some(_) if !d.handed_back && d.attempts as i64 >= retry_limit => {
                    self.ended.push(end);
                    dropped += 1;
                }
                Some(payload) => {
                    let attempts = d.attempts.saturating_add(1);
                    self.redelivered.push(Lease {
                        seq: d.seq,
                        replaces: Some(d.ver),
                        attempts,
                    });
                    self.out.push(Delivery {
                        seq: d.seq,
                        attempts,
                        payload,
                    });
                }
            }
        }
        dropped
    }

    /// Reads up to `more` messages of the partition from `next` on.
    fn read_fresh(&mut self, c: &mut SpiClient<'_>, key: (i64, &str, &str), next: i64, more: i64) {
        let (inc, partition, _) = key;
        for r in exec_keyed(
            c,
            crate::query!("ephemeral_messages_read"),
            &[spi::INT8, spi::TEXT, spi::INT8, spi::INT8],
            &[inc.into(), partition.into(), next.into(), more.into()],
        ) {
            self.out.push(Delivery {
                seq: spi::col(&r, "seq"),
                attempts: 1,
                payload: spi::col(&r, "payload"),
            });
        }
    }

    /// Leases what is handed out (the fresh messages from `fresh_from` on
    /// and the redelivered ones) for `lease_seconds`, or with `auto_ack`
    /// ends the redelivered leases; then ends the leases that ended.
    fn settle(
        self,
        c: &mut SpiClient<'_>,
        key: (i64, &str, &str),
        fresh_from: usize,
        auto_ack: bool,
        lease_seconds: i64,
    ) -> Vec<Delivery> {
        let Handout {
            out,
            mut ended,
            mut redelivered,
        } = self;
        if auto_ack {
            // Redelivered messages count as acknowledged on delivery.
            ended.extend(redelivered);
        } else {
            redelivered.extend(out[fresh_from..].iter().map(|d| Lease {
                seq: d.seq,
                replaces: None,
                attempts: d.attempts,
            }));
            leases::write(c, key, &redelivered, lease_seconds);
        }
        leases::end(c, key, &ended, true);
        out
    }
}

/// Writes a group's cursor in a partition: the next sequence number and
/// the skipped count, over the version `held` (None: a new cursor).
fn cursor_write(
    c: &mut SpiClient<'_>,
    (inc, partition, group): (i64, &str, &str),
    next: i64,
    skipped: i64,
    held: Option<i64>,
) {
    queue::run(
        c,
        [
            crate::query!("ephemeral_cursor_write"),
            crate::query!("ephemeral_rows/ephemeral_cursor_write"),
        ],
        &[
            spi::INT8,
            spi::TEXT,
            spi::TEXT,
            spi::INT8,
            spi::INT8,
            spi::INT8,
        ],
        &[
            inc.into(),
            partition.into(),
            group.into(),
            next.into(),
            skipped.into(),
            held.into(),
        ],
    );
}

/// A group's cursor in a partition: (version, next sequence number,
/// skipped), None when the group has none there.
fn cursor_get(
    c: &mut SpiClient<'_>,
    inc: i64,
    partition: &str,
    group: &str,
) -> Option<(i64, i64, i64)> {
    queue::run(
        c,
        [
            crate::query!("ephemeral_cursor_get"),
            crate::query!("ephemeral_rows/ephemeral_cursor_get"),
        ],
        &[spi::INT8, spi::TEXT, spi::TEXT],
        &[inc.into(), partition.into(), group.into()],
    )
    .next()
    .map(|r| {
        (
            spi::col::<i64>(&r, "ver"),
            spi::col::<i64>(&r, "next_seq"),
            spi::col::<i64>(&r, "skipped"),
        )
    })
}

/// How an ack settles its message.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Settle {
    Done,
    Failed,
}

fn settle_of(field: &str, status: Option<&str>) -> Settle {
    match status {
        None | Some("completed" | "success" | "acked" | "ok") => Settle::Done,
        Some("failed" | "retry") => Settle::Failed,
        Some(other) => errors::invalid(
            field,
            format!("{other:?} is not completed, success, acked, ok, failed or retry"),
        ),
    }
}

/// `{"queue", "group"?, "acks": [{"id", "status"?, "error"?}]}` →
/// `{"results": [{"id", "outcome"}]}`: `acked`, `redelivered` (a failed or
/// retry ack below the retryLimit), `stale` (an id of an incarnation that
/// is gone) or `unknown` (no lease of the group on it).
pub fn ack(c: &mut SpiClient<'_>, body: &Value) -> Value {
    let o = Obj::new(body, "body");
    let queue = check_name("queue", o.req_str("queue"));
    let group = o
        .opt_str("group")
        .filter(|g| !g.is_empty())
        .map_or(QUEUE_MODE, |g| check_name("group", g));
    let acks = o
        .opt_array("acks")
        .unwrap_or_else(|| errors::invalid("acks", "is required"));
    let items = ack_items(acks);
    if items.is_empty() {
        return json!({"results": []});
    }
    switches::refuse_if_paused(c, Surface::Ephemeral);
    let (_, opts) = effective(c, queue);
    let mut s = queue::lock(c, queue);
    let mut touched = BTreeSet::new();
    let mut results = Vec::with_capacity(items.len());
    for (id, settle) in &items {
        let outcome = match (parse_id(id), s.as_mut()) {
            (None, _) => "unknown",
            (Some(_), None) => "stale",
            (Some((inc, _, _)), Some(st)) if inc != st.incarnation => "stale",
            (Some((inc, partition, seq)), Some(st)) => {
                let key = (inc, partition, group);
                let outcome = settle_lease(c, st, key, seq, *settle, opts.retry_limit);
                if outcome == "acked" {
                    touched.insert(partition.to_owned());
                }
                outcome
            }
        };
        results.push(json!({"id": id, "outcome": outcome}));
    }
    if let Some(st) = s.as_mut() {
        for name in touched {
            if let Some(mut p) = queue::part_lock(c, st.incarnation, &name) {
                queue::reclaim_step(c, st, &mut p);
                queue::part_write(c, st.incarnation, &mut p);
            }
        }
        queue::write(c, st);
    }
    json!({"results": results})
}

/// The acks of an ack call, checked: each one's id and how it settles.
fn ack_items(acks: &[Value]) -> Vec<(String, Settle)> {
    let max = settings::ephemeral_ack_max();
    if acks.len() > max {
        errors::invalid(
            "acks",
            format!("{} is more than the {max} one call takes", acks.len()),
        );
    }
    acks.iter()
        .enumerate()
        .map(|(i, a)| {
            let a = Obj::new(a, format!("acks[{i}]"));
            (
                a.req_str("id").to_owned(),
                settle_of(&a.field("status"), a.opt_str("status")),
            )
        })
        .collect()
}

/// Settles the lease `key` holds on message `seq`: `redelivered` (a
/// failure below `retry_limit`), `acked`, or `unknown` when there is none.
fn settle_lease(
    c: &mut SpiClient<'_>,
    st: &mut State,
    key: (i64, &str, &str),
    seq: i64,
    settle: Settle,
    retry_limit: i64,
) -> &'static str {
    let Some((ver, attempts)) = leases::get(c, key, seq) else {
        return "unknown";
    };
    let lease = [Lease {
        seq,
        replaces: Some(ver),
        attempts,
    }];
    if settle == Settle::Failed && (attempts as i64) < retry_limit {
        leases::end(c, key, &lease, false);
        return "redelivered";
    }
    if settle == Settle::Failed {
        st.drops_retry += 1;
    }
    leases::end(c, key, &lease, true);
    "acked"
}

/// Every ephemeral queue, declared or live (at most
/// `queen.ephemeral_list_max`), with its gauges and effective options.
pub fn queues(c: &mut SpiClient<'_>) -> Value {
    let rows: Vec<Value> = queue::run(
        c,
        [
            crate::query!("ephemeral_queues_list"),
            crate::query!("ephemeral_rows/ephemeral_queues_list"),
        ],
        &[spi::INT8],
        &[settings::ephemeral_list_max().into()],
    )
    .map(|r| {
        let declared = spi::opt::<JsonB>(&r, "options").map(|JsonB(o)| o);
        json!({
            "queue": spi::col::<String>(&r, "queue"),
            "tier": if declared.is_some() { "declared" } else { "implicit" },
            "depth": spi::col::<i64>(&r, "depth"),
            "bytes": spi::col::<i64>(&r, "bytes"),
            "partitions": spi::col::<i64>(&r, "partitions"),
            "groups": spi::col::<i64>(&r, "groups"),
            "drops": {
                "bounds": spi::col::<i64>(&r, "drops_bounds"),
                "ttl": spi::col::<i64>(&r, "drops_ttl"),
                "retry": spi::col::<i64>(&r, "drops_retry"),
            },
            "options": options::effective(declared.as_ref()).to_json(),
            "durability": DURABILITY,
        })
    })
    .collect();
    let t = totals(c);
    json!({
        "queues": rows,
        "count": rows.len(),
        "cellBytes": t.bytes,
        "durability": DURABILITY,
    })
}

/// One queue's gauges: what it holds, per partition and per group (what
/// `group` has not been handed yet, when given). 42704 when the queue is
/// neither declared nor live.
pub fn depth(c: &mut SpiClient<'_>, queue: &str, group: Option<&str>) -> Value {
    let queue = check_name("queue", queue);
    let group = group
        .filter(|g| !g.is_empty())
        .map(|g| check_name("group", g));
    let is_declared = declared(c, queue).is_some();
    let state = queue::get(c, queue);
    if !is_declared && state.is_none() {
        errors::undefined("ephemeral queue", queue);
    }
    let limit = settings::ephemeral_list_max();
    let (mut partitions, mut groups) = (Vec::new(), Vec::new());
    let (mut pending, mut partitions_pending, mut bytes) = (0i64, 0i64, 0i64);
    if let Some(s) = &state {
        bytes = s.bytes;
        for p in queue::parts(c, s.incarnation, limit) {
            let waiting = match group {
                None => p.depth,
                Some(g) => {
                    let next =
                        cursor_get(c, s.incarnation, &p.name, g).map_or(p.tail, |(_, n, _)| n);
                    (p.head - next.max(p.tail)).max(0)
                }
            };
            if group.is_some() {
                pending += waiting;
            }
            if waiting > 0 {
                partitions_pending += 1;
            }
            partitions.push(json!({"partition": p.name, "pending": waiting, "bytes": p.bytes}));
        }
        if group.is_none() {
            pending = s.depth;
        }
        groups = queue::run(
            c,
            [
                crate::query!("ephemeral_groups_pending"),
                crate::query!("ephemeral_rows/ephemeral_groups_pending"),
            ],
            &[spi::INT8, spi::INT8],
            &[s.incarnation.into(), limit.into()],
        )
        .map(|r| {
            json!({
                "group": spi::col::<String>(&r, "grp"),
                "pending": spi::col::<i64>(&r, "pending"),
                "skipped": spi::col::<i64>(&r, "skipped"),
            })
        })
        .collect();
    }
    json!({
        "queue": queue,
        "group": group,
        "tier": if is_declared { "declared" } else { "implicit" },
        "pending": pending,
        "partitionsPending": partitions_pending,
        "bytes": bytes,
        "partitions": partitions,
        "groups": groups,
        "durability": DURABILITY,
    })
}

/// The ephemeral queues over all.
pub struct Totals {
    /// Queues declared or live.
    pub queues: i64,
    /// Bytes of messages they hold.
    pub bytes: i64,
    /// The last incarnation drawn (None: none yet).
    pub epoch: Option<i64>,
}

/// The ephemeral queues over all, for the switch's answer and the listing.
pub fn totals(c: &mut SpiClient<'_>) -> Totals {
    let r = queue::run(
        c,
        [
            crate::query!("ephemeral_totals"),
            crate::query!("ephemeral_rows/ephemeral_totals"),
        ],
        &[],
        &[],
    )
    .next()
    .expect("an aggregate answers a row");
    Totals {
        queues: spi::col(&r, "queues"),
        bytes: spi::col(&r, "bytes"),
        epoch: spi::opt(&r, "epoch"),
    }
}
