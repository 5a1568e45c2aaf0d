//! Queen's own views of queues (`list_queues`, `get_queue`, `overview`):
//! the list with counts, one queue's partitions, the totals.

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::pg::spi::{self, exec};
use crate::query;

/// Every queue with its counts and options, by name.
pub fn list(c: &mut SpiClient<'_>) -> Value {
    let rows = exec(c, query!("queues_list"), &[], &[]);
    let queues: Vec<Value> = rows
        .map(|r| {
            json!({
                "name": spi::col::<String>(&r, "name"),
                "namespace": spi::opt::<String>(&r, "namespace"),
                "task": spi::opt::<String>(&r, "task"),
                "createdAt": crate::pg::time::micros_to_iso(spi::col::<i64>(&r, "created_us")),
                "partitions": spi::col::<i64>(&r, "partitions"),
                "messages": spi::col::<i64>(&r, "messages"),
                "failed": spi::col::<i64>(&r, "failed"),
                "pruned_failed": spi::col::<i64>(&r, "pruned_failed"),
            })
        })
        .collect();
    json!({"queues": queues, "total": queues.len()})
}

/// Totals over every queue.
pub fn overview(c: &mut SpiClient<'_>) -> Value {
    let r = exec(c, query!("queues_overview"), &[], &[]).next().unwrap();
    json!({
        "queues": spi::col::<i64>(&r, "queues"),
        "partitions": spi::col::<i64>(&r, "partitions"),
        "messages": spi::col::<i64>(&r, "messages"),
        "failed": spi::col::<i64>(&r, "failed"),
        "pruned_failed": spi::col::<i64>(&r, "pruned_failed"),
    })
}

/// A queue's partitions, by name, at most `queen.pop_max_batch` of them.
pub fn partitions(c: &mut SpiClient<'_>, queue_id: i64) -> Vec<Value> {
    exec(
        c,
        query!("queues_partitions"),
        &[spi::INT8, spi::INT8],
        &[queue_id.into(), crate::pg::settings::pop_max_batch().into()],
    )
    .map(|r| {
        json!({
            "id": spi::col::<i64>(&r, "id").to_string(),
            "name": spi::col::<String>(&r, "name"),
            "lastOffset": spi::col::<i64>(&r, "last_offset"),
            "logStart": spi::col::<i64>(&r, "log_start"),
            "lastWriteAt": crate::pg::time::micros_to_iso(spi::col::<i64>(&r, "last_write_us")),
        })
    })
    .collect()
}
