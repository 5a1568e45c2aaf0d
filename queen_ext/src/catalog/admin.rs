//! Queue management: configure and delete.

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::catalog::options::{KeptOptions, Mode, QueueOptions, REPLACE};
use crate::catalog::queues;
use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::query;
use crate::wire::json::{check_name, Obj};

/// Creates or edits a queue. `merge` keeps the stored value of every option
/// the body omits; `replace` (and a create) starts from the defaults. A key
/// sent as null goes back to its default either way.
pub fn configure(client: &mut SpiClient<'_>, queue: &str, options: &Value, mode: &str) -> Value {
    let queue = check_name("queue", queue);
    let body = Obj::new(options, "options");
    // Queen's `"replace": true` in the body is the mode replace.
    let mode = match body.opt_bool(REPLACE) {
        Some(true) => Mode::Replace,
        _ => Mode::parse(mode),
    };
    let existing = queues::find(client, queue);
    let base = match (&existing, mode) {
        (Some(q), Mode::Merge) => q.options.clone(),
        _ => QueueOptions::default(),
    };
    let new = QueueOptions::apply(&base, body.map, "options");
    let kept_base = match (&existing, mode) {
        (Some(q), Mode::Merge) => queues::kept_options(client, q.id),
        _ => KeptOptions::default(),
    };
    let kept = KeptOptions::apply(&kept_base, body.map, "options");
    let kept_named = mode == Mode::Replace || body.map.keys().any(|k| KeptOptions::is_kept(k));
    let created = match &existing {
        Some(q) => {
            queues::update(client, q.id, &new);
            false
        }
        None => {
            if !queues::insert(client, queue, &new) {
                // Created concurrently: apply this edit on top of it.
                let q =
                    queues::find(client, queue).expect("queue exists after a conflicting insert");
                let merged = QueueOptions::apply(
                    if mode == Mode::Merge {
                        &q.options
                    } else {
                        &base
                    },
                    body.map,
                    "options",
                );
                queues::update(client, q.id, &merged);
            }
            true
        }
    };
    let stored = queues::find(client, queue).expect("configured queue exists");
    if kept_named {
        queues::write_kept_options(client, stored.id, &kept);
    }
    let answered = queues::with_kept(stored.options.to_json(), &kept);
    json!({
        "success": true,
        "configured": true,
        "queue": queue,
        "queueId": stored.id.to_string(),
        "partitionId": null,
        "storage": "segments",
        "namespace": stored.options.namespace,
        "task": stored.options.task,
        "created": created,
        "options": answered,
    })
}

/// Deletes a queue in one call: the segments, sidecar and dead-letter rows
/// and the streaming state of its partitions explicitly (they have no
/// foreign key), everything else by cascade.
pub fn delete_queue(client: &mut SpiClient<'_>, queue: &str) -> Value {
    let queue = check_name("queue", queue);
    delete_queue_if_exists(client, queue).unwrap_or_else(|| errors::undefined("queue", queue))
}

/// Deletes a queue as `delete_queue` does; `None` when there is no such queue
/// (nothing was written).
pub fn delete_queue_if_exists(client: &mut SpiClient<'_>, queue: &str) -> Option<Value> {
    let queue = check_name("queue", queue);
    let q = queues::find(client, queue)?;
    // The lock order: the queue row, then its partitions ascending by id, as
    // a push locks them. Left to the cascade, the partitions would be locked
    // in whatever order the scan meets them, and a push holding one while
    // waiting for another deadlocked with it.
    exec(
        client,
        "SELECT 1 FROM queen.queues WHERE id = $1 FOR UPDATE",
        &[spi::INT8],
        &[q.id.into()],
    );
    let pids: Vec<i64> = exec(
        client,
        query!("admin_lock_partitions"),
        &[spi::INT8],
        &[q.id.into()],
    )
    .map(|r| spi::col::<i64>(&r, "id"))
    .collect();
    // The cursors' states have no foreign key: deleted here, before their
    // cursors go with the partitions.
    crate::catalog::cursors::delete_states_of_partitions(client, &pids);
    // Neither the segments nor their sidecar rows have a foreign key; the
    // partition locks above keep any push from adding to them meanwhile.
    for sql in [
        "DELETE FROM queen.log_segments WHERE partition_id = ANY($1)",
        "DELETE FROM queen.log_txns WHERE partition_id = ANY($1)",
    ] {
        exec(client, sql, &[spi::INT8_ARRAY], &[pids.clone().into()]);
    }
    exec(
        client,
        "DELETE FROM queen.queues WHERE id = $1",
        &[spi::INT8],
        &[q.id.into()],
    );
    // Streaming queries' state in these partitions (a partition id, not a
    // foreign key; the table is 0.11.0's).
    if spi::queen_table_exists(c"stream_state") {
        exec(
            client,
            "DELETE FROM queen.stream_state WHERE partition_id = ANY($1)",
            &[spi::INT8_ARRAY],
            &[pids.clone().into()],
        );
    }
    // After the cascade: it waited for any ack still writing a dead letter
    // into these partitions (the ack holds its cursor and its segment), and
    // this statement sees what that ack committed.
    exec(
        client,
        "DELETE FROM queen.log_dlq WHERE partition_id = ANY($1)",
        &[spi::INT8_ARRAY],
        &[pids.clone().into()],
    );
    Some(json!({
        "success": true, "deleted": true, "existed": true, "queue": queue, "partitions": pids.len(),
    }))
}
