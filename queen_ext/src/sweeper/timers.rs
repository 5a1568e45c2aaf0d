//! Timers in SQL: schedule, cancel, probe, claim and fire.

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use super::worker::Settings;
use crate::errors;
use crate::json::{check_name, MAX_NAME_BYTES};
use crate::push::{self, GroupIn, ItemIn};
use crate::sql::{self, exec, micros_to_iso};

/// Every sweeper scans every one of these; where it starts differs.
pub const SHARDS: i32 = 64;

pub fn schedule(
    c: &mut SpiClient<'_>,
    queue: &str,
    timer_key: &str,
    payload: &[u8],
    delay_ms: i64,
    partition: Option<&str>,
    transaction_id: Option<&str>,
) -> Value {
    let queue = check_name("queue", queue);
    let timer_key = check_name("timer_key", timer_key);
    let partition = check_name("partition", partition.unwrap_or(push::DEFAULT_PARTITION));
    let txn = match transaction_id.filter(|t| !t.is_empty()) {
        Some(t) if t.len() > MAX_NAME_BYTES => errors::too_long("transaction_id", t.len()),
        Some(t) => t.to_owned(),
        None => queen_frames::id_text(&queen_frames::new_message_id()),
    };
    let at: i64 = exec(
        c,
        "INSERT INTO queen.log_timers (queue, timer_key, partition, payload, transaction_id, deliver_at)
         VALUES ($1, $2, $3, $4, $5, now() + make_interval(secs => $6 / 1000.0))
         ON CONFLICT (queue, timer_key) DO UPDATE
            SET partition = EXCLUDED.partition, payload = EXCLUDED.payload,
                transaction_id = EXCLUDED.transaction_id, deliver_at = EXCLUDED.deliver_at,
                claim_token = NULL, claimed_until = NULL, attempts = 0, last_error = NULL
         RETURNING (extract(epoch FROM deliver_at) * 1000000)::int8",
        &[sql::TEXT, sql::TEXT, sql::TEXT, sql::BYTEA, sql::TEXT, sql::INT8],
        &[queue.into(), timer_key.into(), partition.into(), payload.into(), txn.as_str().into(), delay_ms.into()],
    )
    .next()
    .and_then(|r| r.get(1).unwrap())
    .expect("upsert returns its row");
    json!({"queue": queue, "timerKey": timer_key, "partition": partition, "transactionId": txn, "deliverAt": micros_to_iso(at)})
}

pub fn cancel(c: &mut SpiClient<'_>, queue: &str, timer_key: &str) -> bool {
    let queue = check_name("queue", queue);
    let timer_key = check_name("timer_key", timer_key);
    !exec(
        c,
        "DELETE FROM queen.log_timers WHERE queue = $1 AND timer_key = $2 RETURNING 1",
        &[sql::TEXT, sql::TEXT],
        &[queue.into(), timer_key.into()],
    )
    .is_empty()
}

/// How many due rows the probe counts at most (the count only steers the
/// sleep; past this it is "a lot").
const PROBE_COUNT_CAP: i64 = 100_000;

/// Next due instant (ms from now, negative when late), how many are due and
/// claimable, and how late the oldest is: 64 single-row index seeks and one
/// bounded count, from one now().
pub fn probe(c: &mut SpiClient<'_>) -> Value {
    let row = exec(
        c,
        "SELECT (extract(epoch FROM min(m) - now()) * 1000)::int8,
                (SELECT count(*)::int8 FROM (SELECT 1 FROM queen.log_timers
                   WHERE deliver_at <= now() AND (claimed_until IS NULL OR claimed_until < now()) LIMIT $1) d)
           FROM (SELECT (SELECT min(t.deliver_at) FROM queen.log_timers t WHERE t.shard = s) AS m
                   FROM generate_series(0, 63) s) x",
        &[sql::INT8],
        &[PROBE_COUNT_CAP.into()],
    )
    .next()
    .unwrap();
    let next: Option<i64> = row.get(1).unwrap();
    let due: i64 = row.get(2).unwrap().unwrap();
    json!({"nextInMs": next, "due": due, "latenessMs": next.map(|n| (-n).max(0))})
}

/// Claims up to `batch` due, unclaimed (or claim-expired) timers, shard by
/// shard from `start_shard`, skipping rows another sweeper holds.
pub fn claim(c: &mut SpiClient<'_>, start_shard: i32, batch: i32, lease_ms: i32) -> Value {
    let token = uuid::Uuid::new_v4();
    let pg_token = pgrx::Uuid::from_bytes(*token.as_bytes());
    let mut claimed = 0i64;
    for k in 0..SHARDS {
        let left = batch as i64 - claimed;
        if left <= 0 {
            break;
        }
        let shard = (start_shard.rem_euclid(SHARDS) + k) % SHARDS;
        claimed += exec(
            c,
            "WITH picked AS (
                 SELECT queue, timer_key FROM queen.log_timers
                  WHERE shard = $1 AND deliver_at <= now() AND (claimed_until IS NULL OR claimed_until < now())
                  ORDER BY deliver_at LIMIT $2 FOR UPDATE SKIP LOCKED)
             UPDATE queen.log_timers t
                SET claim_token = $3, claimed_until = now() + make_interval(secs => $4 / 1000.0), attempts = t.attempts + 1
               FROM picked p WHERE t.queue = p.queue AND t.timer_key = p.timer_key
             RETURNING 1",
            &[sql::INT2, sql::INT8, sql::UUID, sql::INT4],
            &[(shard as i16).into(), left.into(), pg_token.into(), lease_ms.into()],
        )
        .len() as i64;
    }
    json!({"token": token.to_string(), "claimed": claimed})
}

/// Fires timers claimed under `token` (verifying the claim is still this
/// token's) into the log, at most `max_bytes` of payload in this
/// transaction, and deletes them. Timer rows are locked by (queue,
/// timer_key) before any partition: the declared order.
pub fn fire(c: &mut SpiClient<'_>, token: uuid::Uuid, max_bytes: i64) -> Value {
    let pg_token = pgrx::Uuid::from_bytes(*token.as_bytes());
    let rows: Vec<(String, String, String, Vec<u8>, String, i64)> = exec(
        c,
        "SELECT queue, timer_key, partition, payload, transaction_id,
                GREATEST((extract(epoch FROM now() - deliver_at) * 1000)::int8, 0)
           FROM queen.log_timers WHERE claim_token = $1
          ORDER BY queue, timer_key FOR UPDATE",
        &[sql::UUID],
        &[pg_token.into()],
    )
    .map(|r| {
        (
            r.get(1).unwrap().unwrap(),
            r.get(2).unwrap().unwrap(),
            r.get(3).unwrap().unwrap(),
            r.get(4).unwrap().unwrap(),
            r.get(5).unwrap().unwrap(),
            r.get(6).unwrap().unwrap(),
        )
    })
    .collect();
    let mut bytes = 0i64;
    let mut take = 0usize;
    for r in &rows {
        if take > 0 && bytes + r.3.len() as i64 > max_bytes {
            break;
        }
        bytes += r.3.len() as i64;
        take += 1;
    }
    let firing = &rows[..take];
    let mut groups: Vec<GroupIn> = Vec::new();
    for (index, (queue, _, partition, payload, txn, _)) in firing.iter().enumerate() {
        let item = ItemIn {
            index,
            txn: Some(txn.clone()),
            trace: None,
            payload: payload.clone(),
            encrypted: false,
            message_id: None,
        };
        match groups.iter_mut().find(|g| &g.queue == queue && &g.partition == partition) {
            Some(g) => g.items.push(item),
            None => groups.push(GroupIn { queue: queue.clone(), partition: partition.clone(), items: vec![item], packed: None }),
        }
    }
    if !groups.is_empty() {
        push::push_groups(c, &groups, None, true);
        let queues: Vec<String> = firing.iter().map(|r| r.0.clone()).collect();
        let keys: Vec<String> = firing.iter().map(|r| r.1.clone()).collect();
        exec(
            c,
            "DELETE FROM queen.log_timers t USING unnest($2::text[], $3::text[]) AS f(queue, timer_key)
              WHERE t.claim_token = $1 AND t.queue = f.queue AND t.timer_key = f.timer_key",
            &[sql::UUID, sql::TEXT_ARRAY, sql::TEXT_ARRAY],
            &[pg_token.into(), queues.into(), keys.into()],
        );
    }
    let lateness = firing.iter().map(|r| r.5).max();
    json!({"fired": take, "bytes": bytes, "done": take == rows.len(), "maxLatenessMs": lateness})
}

/// Claim and fire until nothing claimable is due or the cycle's row budget
/// is spent (or, in a worker, half the lease).
pub fn run_once(c: &mut SpiClient<'_>, s: &Settings, start_shard: i32) -> Value {
    let mut fired = 0i64;
    let mut max_lateness = 0i64;
    let mut empty_claim = false;
    while fired < s.cycle_max_rows as i64 {
        let claim = claim(c, start_shard, s.claim_batch, s.lease_ms);
        if claim["claimed"] == 0 {
            empty_claim = true;
            break;
        }
        let token = uuid::Uuid::parse_str(claim["token"].as_str().unwrap()).unwrap();
        loop {
            let r = fire(c, token, s.max_fire_bytes);
            fired += r["fired"].as_i64().unwrap();
            max_lateness = max_lateness.max(r["maxLatenessMs"].as_i64().unwrap_or(0));
            if r["done"] == true {
                break;
            }
        }
    }
    json!({"fired": fired, "maxLatenessMs": max_lateness, "emptyClaim": empty_claim})
}
