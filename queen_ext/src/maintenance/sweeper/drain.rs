//! The sweepers' steps over the timers table: probe what is due, claim a
//! batch under SKIP LOCKED, fire the claimed timers into the log (a failing
//! one set aside after `queen.sweeper_max_fire_attempts` claims).
//!
//! On a schema of `timers::as_log` (0.10.0 on) every step writes new rows
//! only: a claim inserts the schedule's next claim, a fire marks it done,
//! and the due scans start at the floors (`timers::floors`), past the done
//! timers the retention cycle has not deleted yet. Before, a claim stamps
//! the timer row and a fire deletes it.

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::engine::push;
use crate::maintenance::unit::{Failure, Inline, Runner};
use crate::pg::settings;
use crate::pg::spi::{self, exec, exec_custom, exec_indexed};
use crate::query;
use crate::timers::{self, floors};
use crate::wire::push::{GroupIn, ItemIn};

/// The sweepers' settings, read once per cycle.
#[derive(Debug, Clone)]
pub struct Settings {
    pub claim_batch: i32,
    pub cycle_max_rows: i32,
    pub lease_ms: i32,
    pub max_fire_bytes: i64,
    pub max_sleep_ms: i64,
    pub max_fire_attempts: i32,
}

impl Settings {
    pub fn from_gucs() -> Settings {
        Settings {
            claim_batch: settings::sweeper_claim_batch(),
            cycle_max_rows: settings::sweeper_cycle_max_rows(),
            lease_ms: settings::sweeper_lease_ms(),
            max_fire_bytes: settings::sweeper_max_fire_bytes(),
            max_sleep_ms: settings::sweeper_max_sleep_ms(),
            max_fire_attempts: settings::sweeper_max_fire_attempts(),
        }
    }
}

/// A claimed timer as fired: queue, timer key, partition, payload,
/// transaction id, lateness (ms) and message id.
type ClaimedTimer = (String, String, String, Vec<u8>, String, i64, pgrx::Uuid);

/// How many due rows the probe counts at most (the count only steers the
/// sleep; past this it is "a lot").
const PROBE_COUNT_CAP: i64 = 100_000;

/// Next due instant (ms from now, negative when late), how many are due and
/// claimable, and how late the oldest is: 64 single-row index seeks and one
/// bounded count, from one now(). With `use_floors` (the workers) the scans
/// start at the floors, and raise them when this transaction has written
/// nothing (`timers::floors`).
pub fn probe(c: &mut SpiClient<'_>, use_floors: bool) -> Value {
    let (next, due) = if timers::as_log() {
        probe_log(c, use_floors)
    } else {
        let row = exec(
            c,
            query!("sweeper_drain_probe"),
            &[spi::INT8],
            &[PROBE_COUNT_CAP.into()],
        )
        .next()
        .unwrap();
        (spi::opt(&row, "next_in_ms"), spi::col(&row, "due"))
    };
    let now_us = crate::pg::time::wall_clock_us();
    // What a sweeper now knows of: a schedule earlier than this wakes it.
    crate::timers::wake::promised(next.map(|n| now_us + n * 1000));
    super::metrics::probed(due, next.map_or(0, |n| (-n).max(0)));
    json!({"nextInMs": next, "due": due, "latenessMs": next.map(|n| (-n).max(0))})
}

/// [`probe`] on a schema of `timers::as_log`: the next due instant (ms from
/// now) and the due count.
fn probe_log(c: &mut SpiClient<'_>, use_floors: bool) -> (Option<i64>, i64) {
    let from = floors::current(use_floors);
    let (first, now_us) = first_not_done(c, use_floors, &from);
    let next = first
        .iter()
        .flatten()
        .min()
        .map(|at| (at - now_us).div_euclid(1000));
    let due: i64 = exec_custom(
        c,
        query!("sweeper_drain_due_log"),
        &[spi::INT8, spi::INT8_ARRAY],
        &[PROBE_COUNT_CAP.into(), from.into()],
    )
    .next()
    .map_or(0, |r| spi::col(&r, "due"));
    (next, due)
}

/// Per shard, the due instant of the first timer from `from` that is not
/// done (microseconds since the epoch), and the statement's now. With
/// `use_floors`, in a transaction that has written nothing, the floors
/// rise to what it saw (`timers::floors`).
fn first_not_done(
    c: &mut SpiClient<'_>,
    use_floors: bool,
    from: &[Option<i64>],
) -> (Vec<Option<i64>>, i64) {
    // The cap is read before the scan's snapshot is taken.
    let cap: Option<i64> = (use_floors && floors::may_raise())
        .then(|| {
            exec(c, query!("sweeper_timers_cap"), &[], &[])
                .next()
                .and_then(|r| spi::opt(&r, "cap_us"))
        })
        .flatten();
    let mut first: Vec<Option<i64>> = vec![None; from.len()];
    let mut now_us = 0i64;
    for r in exec_custom(
        c,
        query!("sweeper_drain_probe_log"),
        &[spi::INT8_ARRAY],
        &[from.to_vec().into()],
    ) {
        let shard: i32 = spi::col(&r, "shard");
        now_us = spi::col(&r, "now_us");
        first[shard as usize] = spi::opt(&r, "first_us");
    }
    if let Some(cap) = cap {
        floors::raise(&first, cap);
    }
    (first, now_us)
}

/// Raises the floors past the timers fired since the last probe (a
/// worker's claims of one cycle would otherwise each pass them again):
/// the probe's scan alone, in a transaction of its own.
pub fn raise_floors(c: &mut SpiClient<'_>) {
    if timers::as_log() {
        first_not_done(c, true, &floors::current(true));
    }
}

/// A claim: its token and the (queue, timer_key) of the timers it took,
/// in that order.
pub struct Claim {
    pub token: uuid::Uuid,
    pub keys: Vec<(String, String)>,
}

impl Claim {
    /// `{"token", "claimed"}`.
    pub fn json(&self) -> Value {
        json!({"token": self.token.to_string(), "claimed": self.keys.len()})
    }
}

/// Claims up to `batch` due, unclaimed (or claim-expired) timers, shard by
/// shard from `start_shard`, skipping rows another sweeper holds; with
/// `use_floors` each shard from its floor.
pub fn claim(
    c: &mut SpiClient<'_>,
    start_shard: i32,
    batch: i32,
    lease_ms: i32,
    use_floors: bool,
) -> Claim {
    let token = uuid::Uuid::new_v4();
    let pg_token = pgrx::Uuid::from_bytes(*token.as_bytes());
    if timers::as_log() {
        return claim_log(c, start_shard, batch, lease_ms, use_floors, token);
    }
    // A bounded seek per shard, from this worker's starting shard on,
    // stopping once `batch` rows are locked; then the stamp, by key.
    let picked: Vec<(String, String)> = exec_custom(
        c,
        query!("sweeper_drain_claim"),
        &[spi::INT4, spi::INT8],
        &[start_shard.into(), (batch as i64).into()],
    )
    .map(|r| (spi::col(&r, "queue"), spi::col(&r, "timer_key")))
    .collect();
    if picked.is_empty() {
        return Claim {
            token,
            keys: picked,
        };
    }
    let (queues, timer_keys) = key_arrays(&picked);
    let mut keys: Vec<(String, String)> = exec_indexed(
        c,
        query!("sweeper_drain_claim_stamp"),
        &[spi::UUID, spi::INT4, spi::TEXT_ARRAY, spi::TEXT_ARRAY],
        &[
            pg_token.into(),
            lease_ms.into(),
            queues.into(),
            timer_keys.into(),
        ],
    )
    .map(|r| (spi::col(&r, "queue"), spi::col(&r, "timer_key")))
    .collect();
    keys.sort();
    Claim { token, keys }
}

/// [`claim`] on a schema of `timers::as_log`: the picked timers' next
/// claims inserted, the rows held locked meanwhile.
fn claim_log(
    c: &mut SpiClient<'_>,
    start_shard: i32,
    batch: i32,
    lease_ms: i32,
    use_floors: bool,
    token: uuid::Uuid,
) -> Claim {
    let picked: Vec<(String, String, pgrx::Uuid)> = exec_custom(
        c,
        query!("sweeper_drain_claim_log"),
        &[spi::INT4, spi::INT8, spi::INT8_ARRAY],
        &[
            start_shard.into(),
            (batch as i64).into(),
            floors::current(use_floors).into(),
        ],
    )
    .map(|r| {
        (
            spi::col(&r, "queue"),
            spi::col(&r, "timer_key"),
            spi::col(&r, "message_id"),
        )
    })
    .collect();
    if picked.is_empty() {
        return Claim {
            token,
            keys: Vec::new(),
        };
    }
    let mids: Vec<pgrx::Uuid> = picked.iter().map(|p| p.2).collect();
    let claimed = returned_ids(
        c,
        query!("sweeper_drain_claim_insert"),
        &[spi::UUID, spi::INT4, spi::UUID_ARRAY],
        &[
            pgrx::Uuid::from_bytes(*token.as_bytes()).into(),
            lease_ms.into(),
            mids.into(),
        ],
    );
    let mut keys: Vec<(String, String)> = picked
        .into_iter()
        .filter(|p| claimed.contains(p.2.as_bytes()))
        .map(|p| (p.0, p.1))
        .collect();
    keys.sort();
    Claim { token, keys }
}

/// The message ids an insert answered (`RETURNING message_id`): the
/// schedules it claimed or marked, those another sweeper took first left
/// out.
fn returned_ids(
    c: &mut SpiClient<'_>,
    sql: &'static str,
    types: &[pgrx::pg_sys::PgOid],
    args: &[pgrx::datum::DatumWithOid<'_>],
) -> std::collections::HashSet<[u8; 16]> {
    exec(c, sql, types, args)
        .map(|r| *spi::col::<pgrx::Uuid>(&r, "message_id").as_bytes())
        .collect()
}

/// Fires timers claimed under `token` (verifying the claim is still this
/// token's) into the log, at most `max_bytes` of payload in this
/// transaction, and marks them done (before 0.10.0: deletes them). Timer
/// rows are locked by (queue,
/// timer_key) before any partition: the declared order. The timers are
/// found by their keys (`claimed`, a claim's keys), not by the token: no
/// index serves the token, and a scan for it reads every timer scheduled.
pub fn fire(c: &mut SpiClient<'_>, token: uuid::Uuid, max_bytes: i64) -> Value {
    let keys = claimed(c, token);
    fire_keys(c, token, max_bytes, &keys).answer
}

/// What one fire did: its answer (`{"fired", "bytes", "done", ...}`) and
/// the key of the last timer it fired.
struct Fire {
    answer: Value,
    last: Option<(String, String)>,
}

/// The queues and the timer keys of `keys`, as two parallel arrays.
fn key_arrays(keys: &[(String, String)]) -> (Vec<&str>, Vec<&str>) {
    keys.iter().map(|k| (k.0.as_str(), k.1.as_str())).unzip()
}

/// As [`fire`], only the timers of `keys` still claimed under `token`.
fn fire_keys(
    c: &mut SpiClient<'_>,
    token: uuid::Uuid,
    max_bytes: i64,
    keys: &[(String, String)],
) -> Fire {
    let pg_token = pgrx::Uuid::from_bytes(*token.as_bytes());
    let as_log = timers::as_log();
    let rows = claimed_timers(c, pg_token, keys, as_log);
    let (take, bytes) = within_bytes(&rows, max_bytes);
    let mut firing: Vec<&ClaimedTimer> = rows[..take].iter().collect();
    if as_log && !firing.is_empty() {
        // Marked done first: one another fire marked meanwhile is not
        // pushed again.
        let mids: Vec<pgrx::Uuid> = firing.iter().map(|r| r.6).collect();
        let marked = returned_ids(
            c,
            query!("sweeper_drain_done"),
            &[spi::UUID_ARRAY],
            &[mids.into()],
        );
        firing.retain(|r| marked.contains(r.6.as_bytes()));
    }
    let groups = timer_groups(&firing);
    if !groups.is_empty() {
        push::push_groups(c, &groups, None, true);
    }
    if !groups.is_empty() && !as_log {
        let queues: Vec<String> = firing.iter().map(|r| r.0.clone()).collect();
        let keys: Vec<String> = firing.iter().map(|r| r.1.clone()).collect();
        exec_indexed(
            c,
            query!("sweeper_drain_delete_fired"),
            &[spi::UUID, spi::TEXT_ARRAY, spi::TEXT_ARRAY],
            &[pg_token.into(), queues.into(), keys.into()],
        );
    }
    let lateness = firing.iter().map(|r| r.5).max();
    let sum: i64 = firing.iter().map(|r| r.5).sum();
    let fired = firing.len();
    super::metrics::fired(fired as i64, lateness.unwrap_or(0), sum);
    Fire {
        answer: json!({"fired": fired, "bytes": bytes, "done": take == rows.len(), "maxLatenessMs": lateness, "sumLatenessMs": sum}),
        last: rows[..take].last().map(|r| (r.0.clone(), r.1.clone())),
    }
}

/// The timers of `keys` still claimed under `token`, locked in key order;
/// with `as_log`, as a schema of `timers::as_log` keeps them.
fn claimed_timers(
    c: &mut SpiClient<'_>,
    token: pgrx::Uuid,
    keys: &[(String, String)],
    as_log: bool,
) -> Vec<ClaimedTimer> {
    let (queues, timer_keys) = key_arrays(keys);
    let sql = if as_log {
        query!("sweeper_drain_claimed_timers_log")
    } else {
        query!("sweeper_drain_claimed_timers")
    };
    exec_indexed(
        c,
        sql,
        &[spi::UUID, spi::TEXT_ARRAY, spi::TEXT_ARRAY],
        &[token.into(), queues.into(), timer_keys.into()],
    )
    .map(|r| {
        (
            spi::col(&r, "queue"),
            spi::col(&r, "timer_key"),
            spi::col(&r, "partition"),
            spi::col(&r, "payload"),
            spi::col(&r, "transaction_id"),
            spi::col(&r, "lateness_ms"),
            spi::col(&r, "message_id"),
        )
    })
    .collect()
}

/// How many of `rows`, from the first, one fire takes, and their payload
/// bytes: at most `max_bytes`, but always the first.
fn within_bytes(rows: &[ClaimedTimer], max_bytes: i64) -> (usize, i64) {
    let mut bytes = 0i64;
    let mut take = 0usize;
    for r in rows {
        if take > 0 && bytes + r.3.len() as i64 > max_bytes {
            break;
        }
        bytes += r.3.len() as i64;
        take += 1;
    }
    (take, bytes)
}

/// The pushes of the timers `firing`, one group per (queue, partition) in
/// order of first appearance, each item indexed by its place in `firing`.
fn timer_groups(firing: &[&ClaimedTimer]) -> Vec<GroupIn> {
    let mut groups: Vec<GroupIn> = Vec::new();
    for (index, (queue, _, partition, payload, txn, _, mid)) in firing.iter().copied().enumerate() {
        let item = ItemIn {
            index,
            txn: Some(txn.clone()),
            trace: None,
            payload: payload.clone(),
            encrypted: false,
            message_id: Some(*mid.as_bytes()),
        };
        match groups
            .iter_mut()
            .find(|g| &g.queue == queue && &g.partition == partition)
        {
            Some(g) => g.items.push(item),
            None => groups.push(GroupIn {
                queue: queue.clone(),
                partition: partition.clone(),
                items: vec![item],
                packed: None,
            }),
        }
    }
    groups
}

/// The timers claimed under `token`, in (queue, timer_key) order: a scan of
/// the whole table, for `queen_internal.sweeper_fire_v1`, which is given a
/// token alone.
fn claimed(c: &mut SpiClient<'_>, token: uuid::Uuid) -> Vec<(String, String)> {
    let sql = if timers::as_log() {
        query!("sweeper_drain_claimed_log")
    } else {
        query!("sweeper_drain_claimed")
    };
    exec(
        c,
        sql,
        &[spi::UUID],
        &[pgrx::Uuid::from_bytes(*token.as_bytes()).into()],
    )
    .map(|r| (spi::col(&r, "queue"), spi::col(&r, "timer_key")))
    .collect()
}

/// Records a failed fire of one claimed timer. It keeps its claim, so it is
/// tried again only once the claim expires (`queen.sweeper_lease_ms`);
/// once it has been claimed `max_attempts` times it is set aside: moved to
/// `queen.log_timers_failed` with its error, never fired again. Answers
/// whether it was set aside.
fn fire_failed(
    c: &mut SpiClient<'_>,
    token: uuid::Uuid,
    timer: (&str, &str),
    error: &str,
    max_attempts: i32,
) -> bool {
    let pg_token = pgrx::Uuid::from_bytes(*token.as_bytes());
    if timers::as_log() {
        return fire_failed_log(c, pg_token, timer, error, max_attempts);
    }
    let attempts: Option<i32> = exec(
        c,
        query!("sweeper_drain_lock_failed"),
        &[spi::UUID, spi::TEXT, spi::TEXT],
        &[pg_token.into(), timer.0.into(), timer.1.into()],
    )
    .next()
    .and_then(|r| spi::opt(&r, "attempts"));
    match attempts {
        // Rescheduled or cancelled meanwhile: its claim is gone with it.
        None => false,
        Some(n) if n >= max_attempts => {
            exec(
                c,
                query!("sweeper_drain_fire_failed"),
                &[spi::UUID, spi::TEXT, spi::TEXT, spi::TEXT],
                &[
                    pg_token.into(),
                    timer.0.into(),
                    timer.1.into(),
                    error.into(),
                ],
            );
            true
        }
        Some(_) => {
            exec(
                c,
                query!("sweeper_drain_record_error"),
                &[spi::UUID, spi::TEXT, spi::TEXT, spi::TEXT],
                &[
                    pg_token.into(),
                    timer.0.into(),
                    timer.1.into(),
                    error.into(),
                ],
            );
            false
        }
    }
}

/// [`fire_failed`] on a schema of `timers::as_log`: the error is kept on
/// the timer's newest claim, or the timer set aside with its claims.
fn fire_failed_log(
    c: &mut SpiClient<'_>,
    token: pgrx::Uuid,
    timer: (&str, &str),
    error: &str,
    max_attempts: i32,
) -> bool {
    let Some((attempts, mid)) = exec(
        c,
        query!("sweeper_drain_lock_failed_log"),
        &[spi::UUID, spi::TEXT, spi::TEXT],
        &[token.into(), timer.0.into(), timer.1.into()],
    )
    .next()
    .map(|r| {
        (
            spi::col::<i32>(&r, "attempts"),
            spi::col::<pgrx::Uuid>(&r, "message_id"),
        )
    }) else {
        // Rescheduled, cancelled or claimed again meanwhile.
        return false;
    };
    if attempts >= max_attempts {
        exec(
            c,
            query!("sweeper_drain_fire_failed_log"),
            &[spi::UUID, spi::INT4, spi::TEXT],
            &[mid.into(), attempts.into(), error.into()],
        );
        return true;
    }
    exec(
        c,
        query!("sweeper_drain_record_error_log"),
        &[spi::UUID, spi::INT4, spi::TEXT],
        &[mid.into(), attempts.into(), error.into()],
    );
    false
}

/// What firing one claim did.
#[derive(Debug, Default, Clone, Copy)]
pub struct Fired {
    pub fired: i64,
    pub max_lateness_ms: i64,
    /// Timers whose fire failed (they stay claimed until the claim expires).
    pub failed: i64,
    /// Of those, the ones set aside for good.
    pub set_aside: i64,
}

/// Fires every timer of `claim`, each batch a unit of `runner` (at most
/// `max_bytes` of payload each). When a batch fails, its timers are fired
/// one at a time, so one timer that can not be fired (a payload its queue
/// refuses, a queue deleted under it) never holds back the others: its
/// failure is recorded on its row.
pub fn fire_claimed<R: Runner>(
    runner: &mut R,
    claim: &Claim,
    s: &Settings,
) -> Result<Fired, Failure> {
    let token = claim.token;
    let mut out = Fired::default();
    let add = |out: &mut Fired, r: &Value| {
        out.fired += r["fired"].as_i64().unwrap_or(0);
        out.max_lateness_ms = out
            .max_lateness_ms
            .max(r["maxLatenessMs"].as_i64().unwrap_or(0));
    };
    let mut left: &[(String, String)] = &claim.keys;
    loop {
        match runner.run(|c| fire_keys(c, token, s.max_fire_bytes, left)) {
            Ok(f) => {
                add(&mut out, &f.answer);
                if f.answer["done"] == true {
                    return Ok(out);
                }
                // Fired in key order: what is left follows the last fired.
                if let Some(last) = f.last {
                    left = &left[left.partition_point(|k| *k <= last)..];
                }
            }
            Err(e) if e.stops_the_cycle() => return Err(e),
            Err(_) => break,
        }
    }
    for one in left {
        let (queue, key) = one;
        match runner.run(|c| fire_keys(c, token, i64::MAX, std::slice::from_ref(one))) {
            Ok(f) => add(&mut out, &f.answer),
            Err(e) if e.stops_the_cycle() => return Err(e),
            Err(e) => {
                out.failed += 1;
                let error = e.to_string();
                if runner.run(|c| {
                    fire_failed(
                        c,
                        token,
                        (queue.as_str(), key.as_str()),
                        &error,
                        s.max_fire_attempts,
                    )
                })? {
                    out.set_aside += 1;
                    pgrx::log!("sweeper: timer {queue:?}/{key:?} set aside after its last allowed fire failed: {error}");
                }
            }
        }
    }
    super::metrics::fire_failed(out.failed, out.set_aside);
    Ok(out)
}

/// One claim and its fires, in the caller's transaction (each fire in a
/// subtransaction). One claim only: the claim locks its timer rows, the
/// fires then lock partitions, and a second claim would take timer rows
/// after partition rows, against the declared order. The workers loop
/// this, each step its own transaction.
pub fn run_once(s: &Settings, start_shard: i32) -> Result<Value, Failure> {
    let mut runner = Inline;
    let claim = runner.run(|c| claim(c, start_shard, s.claim_batch, s.lease_ms, false))?;
    let empty_claim = claim.keys.is_empty();
    let mut fired = Fired::default();
    if !empty_claim {
        fired = fire_claimed(&mut runner, &claim, s)?;
    }
    Ok(json!({
        "fired": fired.fired,
        "maxLatenessMs": fired.max_lateness_ms,
        "emptyClaim": empty_claim,
        "failed": fired.failed,
        "setAside": fired.set_aside,
    }))
}
