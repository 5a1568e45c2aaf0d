//! The messages the benches send and the answers they read back: order
//! events (varied ones drawn from a pool generated once, and plain ones of a
//! fixed shape), the items of a `queen.push` array, a consumer's view of a
//! pop answer and the ack body it sends for what it read.

use std::fmt::Display;
use std::sync::OnceLock;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::value::RawValue;
use serde_json::{json, Value};

const WORDS: &[&str] = &[
    "alpha",
    "bravo",
    "delta",
    "urgent",
    "gift",
    "express",
    "standard",
    "fragile",
    "returns",
    "priority",
    "weekend",
    "invoice",
    "warehouse",
    "north",
    "south",
    "east",
    "west",
    "bulk",
    "retail",
    "online",
];
const NAMES: &[&str] = &[
    "Ada Lovelace",
    "Alan Turing",
    "Grace Hopper",
    "Edsger Dijkstra",
    "Barbara Liskov",
    "Ken Thompson",
];
const CURRENCIES: &[&str] = &["EUR", "USD", "GBP", "CHF", "JPY"];
const STATUSES: &[&str] = &["created", "paid", "packed", "shipped", "delivered"];

/// An order event of about 256 bytes with varied fields.
pub fn order_event(rng: &mut SmallRng) -> Value {
    let items: Vec<Value> = (0..rng.random_range(1..=2))
        .map(|_| {
            json!({
                "sku": format!("SKU-{:06}", rng.random_range(0..1_000_000)),
                "qty": rng.random_range(1..10),
                "price": (rng.random_range(100..100_000) as f64) / 100.0,
            })
        })
        .collect();
    let note: Vec<&str> = (0..rng.random_range(1..4))
        .map(|_| WORDS[rng.random_range(0..WORDS.len())])
        .collect();
    json!({
        "orderId": format!("{:016x}", rng.random::<u64>()),
        "customer": {
            "id": rng.random_range(1..5_000_000),
            "name": NAMES[rng.random_range(0..NAMES.len())],
        },
        "items": items,
        "total": (rng.random_range(100..1_000_000) as f64) / 100.0,
        "currency": CURRENCIES[rng.random_range(0..CURRENCIES.len())],
        "status": STATUSES[rng.random_range(0..STATUSES.len())],
        "ts": 1_790_000_000_000i64 + rng.random_range(0..100_000_000i64),
        "note": note.join(" "),
    })
}

/// `n` order events from `rng`.
pub fn order_events(rng: &mut SmallRng, n: usize) -> Vec<Value> {
    (0..n).map(|_| order_event(rng)).collect()
}

/// Order events in the pool.
const POOL_SIZE: usize = 8192;

/// Order events generated once, as JSON text: a bench draws its messages
/// from here in turn, so the client's share of the cores goes to sending,
/// not to generating, and every contender gets the same bytes.
pub fn pool() -> &'static [String] {
    static POOL: OnceLock<Vec<String>> = OnceLock::new();
    POOL.get_or_init(|| {
        let mut rng = SmallRng::seed_from_u64(42);
        (0..POOL_SIZE)
            .map(|_| order_event(&mut rng).to_string())
            .collect()
    })
}

/// `n` payloads from the pool, starting at `*cursor` (which moves on).
pub fn take(cursor: &mut usize, n: usize) -> Vec<&'static str> {
    let p = pool();
    let out = (0..n)
        .map(|i| p[(*cursor + i) % p.len()].as_str())
        .collect();
    *cursor = (*cursor + n) % p.len();
    out
}

/// A small order event of a fixed shape: order `order_id` (as 16 hex
/// digits), its customer id `i` and its total 12.5 + `i`.
pub fn plain_order(order_id: u64, i: usize) -> Value {
    json!({"orderId": format!("{order_id:016x}"), "customer": {"id": i, "name": "Ada Lovelace"},
           "total": 12.5 + i as f64, "currency": "EUR", "status": "paid", "note": "alpha bravo"})
}

/// One item of a push array: `payload` for `queue`, in `partition` (the
/// queue's default partition when `None`).
pub fn push_item(queue: &str, partition: Option<&str>, payload: Value) -> Value {
    match partition {
        Some(partition) => json!({"queue": queue, "partition": partition, "payload": payload}),
        None => json!({"queue": queue, "payload": payload}),
    }
}

/// A consumer's view of a pop answer: what it acks by, and each message's
/// data still as JSON text (a consumer hands it on to its own types).
#[derive(serde::Deserialize)]
pub struct Popped<'a> {
    /// The messages popped; none when the answer has none.
    #[serde(borrow, default)]
    pub messages: Vec<PoppedMessage<'a>>,
}

/// One message of a pop answer, as [`Popped`] reads it.
#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PoppedMessage<'a> {
    /// The message's transaction id.
    pub transaction_id: &'a str,
    /// The partition it was popped from.
    pub partition_id: &'a str,
    /// The lease it is held under.
    pub lease_id: Option<&'a str>,
    /// Its data, as JSON text.
    #[serde(borrow)]
    pub data: &'a RawValue,
}

impl Popped<'_> {
    /// The ack body completing every message popped ([`ack_body`]).
    pub fn acks(&self) -> String {
        ack_body(self.messages.iter().map(|m| {
            (
                m.transaction_id,
                m.partition_id,
                m.lease_id.unwrap_or_default(),
            )
        }))
    }

    /// The bytes of data the messages carry, as JSON text.
    pub fn data_len(&self) -> usize {
        self.messages.iter().map(|m| m.data.get().len()).sum()
    }
}

/// The ack body a consumer sends for what it read: (transaction id,
/// partition id, lease id) of each message, all completed.
pub fn ack_body<'a, P: Display>(read: impl Iterator<Item = (&'a str, P, &'a str)>) -> String {
    let mut acks = String::from("[");
    for (i, (txn, pid, lease)) in read.enumerate() {
        if i > 0 {
            acks.push(',');
        }
        let txn = serde_json::to_string(txn).unwrap();
        acks.push_str(&format!(
            "{{\"transactionId\":{txn},\"partitionId\":\"{pid}\",\"leaseId\":\"{lease}\"}}"
        ));
    }
    acks.push(']');
    acks
}
