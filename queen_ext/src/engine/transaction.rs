//! `queen.transaction(ops)`: KV ops, timers, pushes and acks, all or nothing.
//!
//! The KV rider runs first (kv rows, by (ns, key)), then the timer rider
//! (timer rows, by (queue, timer_key)), then every push (partition locks,
//! ascending by id), then every ack (consumer locks, ordered): the declared
//! lock order. A lost `required` KV precondition answers
//! `{"success": false, "reason": "kv_precondition", ...}` before a single
//! partition lock is taken and with nothing written; any refused ack or
//! lease raises an error, which rolls the whole transaction back. Results
//! are one flat list: every pushed item and ack, then the KV ops, then the
//! timer ops.

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::catalog::switches::{self, Surface};
use crate::engine::ack;
use crate::engine::counters::{self, Count};
use crate::engine::push;
use crate::pg::errors;
use crate::pg::spi;
use crate::query;
use crate::wire::ack::{self as ack_wire, AckIn};
use crate::wire::json::{parse_uuid, Obj};
use crate::wire::push::{self as push_wire, GroupIn};

/// One operation of the body, in request order.
enum Op {
    /// Indexes of its items in the flattened push list.
    Push(std::ops::Range<usize>),
    Ack(usize),
}

/// A transaction body, parsed and checked before anything is touched.
struct Parsed {
    kv_ops: Vec<crate::kv::ops::Op>,
    timer_ops: Vec<crate::timers::TimerOp>,
    /// The JSON push items of every push operation, flattened.
    push_items: Vec<Value>,
    acks: Vec<AckIn>,
    /// The operations in request order, pointing into `push_items`/`acks`.
    plan: Vec<Op>,
    leases: Vec<uuid::Uuid>,
}

/// Reads the body's riders, operations and required leases; a single
/// required lease is lent to the acks that name none.
fn parse(body: &Value, binary_pushes: bool) -> Parsed {
    let empty = Vec::new();
    let mut kv_ops = Vec::new();
    let (ops, leases, timer_ops): (
        &Vec<Value>,
        Option<&Vec<Value>>,
        Vec<crate::timers::TimerOp>,
    ) = match body {
        Value::Array(a) => (a, None, Vec::new()),
        Value::Object(_) => {
            let o = Obj::new(body, "");
            let timers = match o.get("timers") {
                Some(t) => crate::timers::parse_ops(&serde_json::json!({"operations": t})),
                None => Vec::new(),
            };
            if let Some(list) = o.opt_array("kv") {
                kv_ops = crate::kv::parse::ops(list, "kv", true);
            }
            let ops = match o.opt_array("operations") {
                Some(ops) => ops,
                None if !timers.is_empty() || !kv_ops.is_empty() => &empty,
                None => errors::invalid("operations", "is required"),
            };
            (ops, o.opt_array("requiredLeases"), timers)
        }
        _ => errors::wrong_type("transaction", "an object with operations"),
    };
    if ops.is_empty() && timer_ops.is_empty() && kv_ops.is_empty() && !binary_pushes {
        errors::invalid("operations", "must not be empty");
    }
    let (push_items, mut acks, plan) = operations(ops);
    let leases = required_leases(leases);
    if leases.len() == 1 {
        for a in acks.iter_mut().filter(|a| a.lease_id.is_none()) {
            a.lease_id = Some(leases[0]);
        }
    }
    Parsed {
        kv_ops,
        timer_ops,
        push_items,
        acks,
        plan,
        leases,
    }
}

/// The operations in request order: the JSON push items flattened, the acks
/// parsed, and the plan that points into both.
fn operations(ops: &[Value]) -> (Vec<Value>, Vec<AckIn>, Vec<Op>) {
    let mut push_items: Vec<Value> = Vec::new();
    let mut acks: Vec<AckIn> = Vec::new();
    let mut plan: Vec<Op> = Vec::with_capacity(ops.len());
    for (i, op) in ops.iter().enumerate() {
        let path = format!("operations[{i}]");
        let o = Obj::new(op, path.clone());
        match o.req_str("type") {
            "push" => {
                let start = push_items.len();
                match o.opt_array("items") {
                    Some(items) => push_items.extend(items.iter().cloned()),
                    None => push_items.push(op.clone()),
                }
                plan.push(Op::Push(start..push_items.len()));
            }
            "ack" => {
                plan.push(Op::Ack(acks.len()));
                acks.push(ack_wire::parse_one(op, &path, acks.len(), None));
            }
            other => errors::invalid(
                &o.field("type"),
                format!("{other:?} is not one of push, ack"),
            ),
        }
    }
    (push_items, acks, plan)
}

/// The lease ids the transaction requires to be held.
fn required_leases(leases: Option<&Vec<Value>>) -> Vec<uuid::Uuid> {
    leases
        .map(|l| {
            l.iter()
                .enumerate()
                .map(|(i, v)| match v {
                    Value::String(s) => parse_uuid(&format!("requiredLeases[{i}]"), s),
                    _ => errors::wrong_type(&format!("requiredLeases[{i}]"), "a lease id string"),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Refuses the transaction unless every required lease is held.
fn check_leases(client: &mut SpiClient<'_>, leases: &[uuid::Uuid]) {
    for lease in leases {
        let held = crate::catalog::cursors::exec(
            client,
            [
                query!("transaction_check_leases"),
                query!("cursor_rows/transaction_check_leases"),
            ],
            &[spi::UUID],
            &[pgrx::Uuid::from_bytes(*lease.as_bytes()).into()],
        )
        .next()
        .is_some();
        if !held {
            errors::lease_not_held(format!("requiredLeases: lease {lease} is not held (expired or released); nothing was applied"));
        }
    }
}

/// `binary`: the pushes of a QTB1 body, answered after the head's
/// operations; `counts_only` answers counts instead of the pushes' and
/// acks' results (the riders' results stay).
pub fn transaction(
    client: &mut SpiClient<'_>,
    body: &Value,
    producer: Option<&str>,
    binary: Vec<GroupIn>,
    counts_only: bool,
) -> Value {
    let parsed = parse(body, !binary.is_empty());
    check_leases(client, &parsed.leases);
    // Server-wide (queue 0): a transaction may span queues.
    counters::add(0, "", &[(Count::Transactions, 1)]);
    let Parsed {
        kv_ops,
        timer_ops,
        push_items,
        acks,
        plan,
        ..
    } = parsed;
    let flat_ops = flat_ops(&plan, &binary);
    let kv_results = if kv_ops.is_empty() {
        Vec::new()
    } else {
        let a = crate::kv::store::run(client, &kv_ops);
        if a.failed.is_some() {
            return crate::kv::answer(a, flat_ops);
        }
        a.results
    };
    let timers = crate::timers::apply(client, &timer_ops);
    let json_items = push_items.len();
    let groups = push_groups_of(&push_items, binary);
    let pushed = if groups.is_empty() {
        Vec::new()
    } else {
        switches::refuse_if_paused(client, Surface::Push);
        push::push_groups(client, &groups, producer, true)
    };
    let acked = if acks.is_empty() {
        Vec::new()
    } else {
        ack::ack(client, &acks)
    };
    refuse_unless_acked(&acked);
    let done = Done {
        plan: &plan,
        pushed: &pushed,
        acked: &acked,
        json_items,
        flat_ops,
    };
    answer(&done, counts_only, kv_results, timers)
}

/// How many pushed items and acks the transaction carries, the binary
/// body's pushed items included.
fn flat_ops(plan: &[Op], binary: &[GroupIn]) -> usize {
    let binary_items: usize = binary.iter().map(|g| g.items.len()).sum();
    plan.iter()
        .map(|op| match op {
            Op::Push(range) => range.len(),
            Op::Ack(_) => 1,
        })
        .sum::<usize>()
        + binary_items
}

/// The groups a transaction pushes: its JSON push items', then the binary
/// body's, whose item indexes follow the JSON items'.
fn push_groups_of(push_items: &[Value], mut binary: Vec<GroupIn>) -> Vec<GroupIn> {
    let json_items = push_items.len();
    let mut groups: Vec<GroupIn> = if push_items.is_empty() {
        Vec::new()
    } else {
        push_wire::items_from_values(push_items)
    };
    for g in binary.iter_mut() {
        g.items.iter_mut().for_each(|it| it.index += json_items);
    }
    groups.append(&mut binary);
    groups
}

/// Refuses the transaction when one of its acks was refused.
fn refuse_unless_acked(acked: &[ack_wire::AckOut]) {
    if let Some(bad) = acked.iter().find(|a| !a.success()) {
        errors::lease_not_held(format!(
            "operations: ack of {:?} in partition {} refused: {}; nothing was applied",
            bad.transaction_id,
            bad.partition_id,
            bad.error.as_deref().unwrap_or("")
        ));
    }
}

/// What the pushes and acks of a transaction did, in the shape the answer
/// reads it.
struct Done<'a> {
    plan: &'a [Op],
    pushed: &'a [push_wire::ItemOut],
    acked: &'a [ack_wire::AckOut],
    /// Pushed items that came as JSON (the binary body's pushes follow).
    json_items: usize,
    /// Pushed items and acks: where the riders' indexes start under
    /// `counts_only`.
    flat_ops: usize,
}

/// The transaction's answer: every pushed item and ack in request order
/// (or, under `counts_only`, their counts), then the KV and timer results,
/// each with its index.
fn answer(d: &Done<'_>, counts_only: bool, kv_results: Vec<Value>, timers: Vec<Value>) -> Value {
    let base = if counts_only { d.flat_ops } else { 0 };
    let mut answer = json!({ "success": true });
    let mut results = Vec::new();
    if counts_only {
        let duplicate = d.pushed.iter().filter(|p| p.duplicate).count();
        answer["pushed"] = json!(d.pushed.len() - duplicate);
        answer["duplicate"] = json!(duplicate);
        answer["acked"] = json!(d.acked.len());
    } else {
        results = in_request_order(d.plan, d.pushed, d.acked, d.json_items);
    }
    results.extend(kv_results);
    results.extend(timers);
    for (i, r) in results.iter_mut().enumerate() {
        r["index"] = json!(base + i);
    }
    answer["results"] = Value::Array(results);
    answer
}

/// The pushed items and acks as the request listed them, then the pushes
/// of a binary body.
fn in_request_order(
    plan: &[Op],
    pushed: &[push_wire::ItemOut],
    acked: &[ack_wire::AckOut],
    json_items: usize,
) -> Vec<Value> {
    let mut results = Vec::new();
    for op in plan {
        match op {
            Op::Push(range) => results.extend(pushed[range.clone()].iter().map(push_result)),
            Op::Ack(i) => {
                let mut v = acked[*i].to_json();
                v["type"] = json!("ack");
                results.push(v);
            }
        }
    }
    results.extend(pushed[json_items..].iter().map(push_result));
    results
}

/// A pushed item's entry in the flat results.
fn push_result(r: &push_wire::ItemOut) -> Value {
    let mut v = r.to_json();
    v["type"] = json!("push");
    v
}
