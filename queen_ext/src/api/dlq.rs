//! The failures surface: listing, retrying and deleting dead letters, and
//! the counts that make DLQ retention's losses visible.

use crate::wire::datum::ArgValue;
use pgrx::datum::TimestampWithTimeZone;
use pgrx::prelude::*;
use serde_json::{json, Value};

use crate::catalog::queues;
use crate::engine::dlq::{self, DeadLetter};
use crate::pg::errors;
use crate::pg::spi;
use crate::reads::dlq as dlq_reads;
use crate::wire::datum::{JsonOut, JsonbArg};
use crate::wire::json::Obj;

fn check_limit(field: &str, n: i32) -> i64 {
    let max = crate::pg::settings::pop_max_batch();
    if n <= 0 || i64::from(n) > max {
        errors::invalid(
            field,
            format!("{n} is not between 1 and queen.pop_max_batch ({max})"),
        );
    }
    n as i64
}

/// The options of a dead-letter listing, checked: queue, consumerGroup,
/// partition, from, to (ISO timestamps), limit (default 100), offset. The
/// queue comes back by name beside the filter, which wants its id.
fn parse_filter(options: &Value) -> (Option<&str>, dlq_reads::Filter<'_>) {
    let o = Obj::new(options, "options");
    let (queue, group, partition) = (
        o.opt_name("queue"),
        o.opt_name("consumerGroup"),
        o.opt_name("partition"),
    );
    let limit = check_limit(
        "options.limit",
        o.opt_i64("limit")
            .unwrap_or(100)
            .clamp(i32::MIN as i64, i32::MAX as i64) as i32,
    );
    let offset = o.opt_i64("offset").unwrap_or(0);
    if offset < 0 {
        errors::invalid("options.offset", format!("{offset} must not be negative"));
    }
    let ts = |key: &str| -> Option<TimestampWithTimeZone> {
        o.opt_str(key).map(|t| {
            let field = o.field(key);
            crate::pg::time::us_to_timestamptz(&field, crate::pg::time::filter_us(&field, t))
        })
    };
    let (from, to) = (ts("from"), ts("to"));
    let filter = dlq_reads::Filter {
        queue_id: None,
        group,
        partition,
        from,
        to,
        limit,
        offset,
    };
    (queue, filter)
}

/// Retries up to `max_rows` dead letters of a queue (one consumer group, or
/// all): each message pushed again into its partition under its
/// transaction id, and its row removed. `{"retried": [...], "matched": n,
/// "pruned_failed_count": n}`: `matched - len(retried)` rows are held by a
/// concurrent retry.
#[pg_extern]
fn dlq_retry_queue(
    queue: &str,
    consumer_group: default!(Option<&str>, "NULL"),
    max_rows: default!(i32, 100),
) -> JsonOut {
    let limit = check_limit("max_rows", max_rows);
    JsonOut::of(&spi::spi(|c| {
        let qid = queues::require_id(c, queue);
        let (rows, matched) = dlq::for_retry(c, qid, consumer_group, limit);
        let retried = dlq::retry(c, &rows);
        json!({"retried": retried, "matched": matched, "pruned_failed_count": dlq::pruned_failed_count(c, qid)})
    }))
}

/// Deprecated (0.13.0; removed in 0.14.0): `dlq_retry_queue`.
#[pg_extern]
fn retry_failed_by_queue(
    queue: &str,
    consumer_group: default!(Option<&str>, "NULL"),
    max_rows: default!(i32, 100),
) -> JsonOut {
    dlq_retry_queue(queue, consumer_group, max_rows)
}

/// Deprecated (0.13.0; removed in 0.14.0): `dlq_retry_message`, which
/// moves the newest dead letter of the message back as Queen's server does.
/// Retries the dead letters of one message (every group that dead-lettered
/// it) under its transaction id.
#[pg_extern]
fn retry_dlq_message(partition_id: i64, transaction_id: &str) -> JsonOut {
    JsonOut::of(&spi::spi(|c| {
        let matched = dlq::by_message(c, partition_id, transaction_id, false).len();
        let rows = dlq::by_message(c, partition_id, transaction_id, true);
        if matched == 0 {
            errors::undefined("dead letter", &format!("{partition_id}/{transaction_id}"));
        }
        let qid = queues::of_partition(c, partition_id).unwrap_or(0);
        let retried = dlq::retry(c, &rows);
        json!({"retried": retried, "matched": matched, "pruned_failed_count": dlq::pruned_failed_count(c, qid)})
    }))
}

/// Deprecated (0.12.0; removed in 0.14.0): `dlq_message_delete`.
#[pg_extern]
fn delete_dlq_message(partition_id: i64, transaction_id: &str) -> JsonOut {
    dlq_message_delete(partition_id, transaction_id)
}

/// Deletes the dead letters of one message.
#[pg_extern]
fn dlq_message_delete(partition_id: i64, transaction_id: &str) -> JsonOut {
    JsonOut::of(&spi::spi(|c| {
        let rows = dlq::by_message(c, partition_id, transaction_id, true);
        if rows.is_empty() {
            errors::undefined("dead letter", &format!("{partition_id}/{transaction_id}"));
        }
        let deleted = dlq::delete_rows(c, &rows.iter().map(|r| r.id).collect::<Vec<_>>());
        json!({"deleted": deleted, "partitionId": partition_id.to_string(), "transactionId": transaction_id})
    }))
}

/// Deprecated (0.12.0; removed in 0.14.0): `dlq_list`, whose `matched` is
/// this answer's `total`. Dead letters, newest failure first. Options as
/// `dlq_list`; an unknown queue is 42704.
#[pg_extern]
fn dlq_messages(options: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let options: Value = options.map(|a| a.value("options")).unwrap_or(json!({}));
    let (queue, mut filter) = parse_filter(&options);
    spi::spi(|c| {
        filter.queue_id = queue.map(|q| queues::require_id(c, q));
        let (messages, total) = dlq_reads::list(c, &filter);
        // Serialized as they are: a payload becomes no value tree on its way out.
        #[derive(serde::Serialize)]
        struct Page<'a> {
            messages: &'a [DeadLetter],
            total: i64,
            limit: i64,
            offset: i64,
        }
        JsonOut::of(&Page {
            messages: &messages,
            total,
            limit: filter.limit,
            offset: filter.offset,
        })
    })
}

/// A queue's counts: partitions, live messages, live dead letters, and the
/// dead letters DLQ retention removed (cumulative).
#[pg_extern]
fn queue_counts(queue: &str) -> JsonOut {
    JsonOut::of(&spi::spi(|c| {
        let qid = queues::require_id(c, queue);
        dlq_reads::queue_counts(c, queue, qid)
    }))
}

/// Deprecated (0.12.0; removed in 0.14.0): `dlq_message_get`.
#[pg_extern]
fn get_dlq_message(partition_id: i64, transaction_id: &str) -> JsonOut {
    dlq_message_get(partition_id, transaction_id)
}

/// The dead letters of one message (every group that dead-lettered it).
#[pg_extern]
fn dlq_message_get(partition_id: i64, transaction_id: &str) -> JsonOut {
    spi::spi(|c| {
        let rows = dlq::by_message(c, partition_id, transaction_id, false);
        if rows.is_empty() {
            errors::undefined("dead letter", &format!("{partition_id}/{transaction_id}"));
        }
        #[derive(serde::Serialize)]
        struct Messages<'a> {
            messages: &'a [DeadLetter],
        }
        JsonOut::of(&Messages { messages: &rows })
    })
}

/// Dead letters as Queen's server lists them, newest failure first: each
/// with its row `id`, `consumerGroup` `__QUEUE_MODE__` in queue mode;
/// `pagination: {limit, offset}`, `total` (the rows on this page) and
/// `matched` (every dead letter the filters match). An unknown queue is an
/// empty page. Options: queue, consumerGroup, partition, from, to (ISO
/// timestamps), limit (default 100), offset.
#[pg_extern]
fn dlq_list(options: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let options: Value = options.map(|a| a.value("options")).unwrap_or(json!({}));
    let (queue, mut filter) = parse_filter(&options);
    spi::spi(|c| {
        // None: a queue named that does not exist (an empty page).
        let found = match queue {
            None => Some(None),
            Some(q) => queues::find(c, q).map(|q| Some(q.id)),
        };
        let (rows, matched) = match found {
            Some(queue_id) => {
                filter.queue_id = queue_id;
                dlq_reads::list(c, &filter)
            }
            None => (Vec::new(), 0),
        };
        let messages: Vec<dlq_reads::ListedDeadLetter> = rows
            .into_iter()
            .map(dlq_reads::ListedDeadLetter::from)
            .collect();
        let (limit, offset) = (filter.limit, filter.offset);
        #[derive(serde::Serialize)]
        struct Pagination {
            limit: i64,
            offset: i64,
        }
        #[derive(serde::Serialize)]
        struct Page<'a> {
            messages: &'a [dlq_reads::ListedDeadLetter],
            pagination: Pagination,
            total: usize,
            matched: i64,
        }
        JsonOut::of(&Page {
            messages: &messages,
            pagination: Pagination { limit, offset },
            total: messages.len(),
            matched,
        })
    })
}

/// Moves one dead letter, by row id, back into its queue and partition (or
/// those `options` names: `{"queue"?, "partition"?}`) under the transaction
/// id `dlq:<id>`, and deletes the row, in one transaction. Answers Queen's
/// move body (`result` moved or duplicate, `replayedAs`, `dlqRowRemoved`);
/// a row that is not there (never was, or already moved) is 42704.
#[pg_extern]
fn dlq_replay(id: i64, options: default!(Option<JsonbArg>, "'{}'")) -> JsonOut {
    let options: Value = options.map(|a| a.value("options")).unwrap_or(json!({}));
    let o = Obj::new(&options, "options");
    let to = dlq::MoveTo {
        queue: o.opt_name("queue"),
        partition: o.opt_name("partition"),
    };
    JsonOut::of(&spi::spi(|c| match dlq::move_back(c, id, &to) {
        Some(moved) => moved.to_json(),
        None => errors::undefined("dead letter", &id.to_string()),
    }))
}

/// Moves the newest dead letter of one message (partition, transaction id)
/// back into the log as `dlq_replay` does; the other groups' dead letters
/// of it stay. An address with no dead letter is 42704.
#[pg_extern]
fn dlq_retry_message(partition_id: i64, transaction_id: &str) -> JsonOut {
    JsonOut::of(&spi::spi(|c| {
        let moved = dlq::newest_of_message(c, partition_id, transaction_id)
            .and_then(|id| dlq::move_back(c, id, &dlq::MoveTo::default()));
        match moved {
            Some(moved) => moved.to_json(),
            None => errors::undefined("dead letter", &format!("{partition_id}/{transaction_id}")),
        }
    }))
}

/// Deletes the dead letters of a queue (one consumer group, or all), at
/// most `dlq::PURGE_MAX_ROWS` per call (`more` says some are left), counted
/// into the queue's `pruned_failed_count` as DLQ retention counts. An
/// unknown queue deletes nothing.
#[pg_extern]
fn dlq_purge(queue: Option<&str>, consumer_group: default!(Option<&str>, "NULL")) -> JsonOut {
    let queue = queue.unwrap_or_else(|| errors::invalid("queue", "is required"));
    let queue = crate::wire::json::check_name("queue", queue);
    let group = consumer_group.map(|g| crate::wire::json::check_name("consumer_group", g));
    JsonOut::of(&spi::spi(|c| {
        let (deleted, pruned) = match queues::find(c, queue) {
            Some(q) => {
                let n = dlq::purge(c, q.id, group);
                (n, dlq::pruned_failed_count(c, q.id))
            }
            None => (0, 0),
        };
        json!({"success": true, "deleted": deleted, "queue": queue, "consumerGroup": group,
               "more": deleted >= dlq::PURGE_MAX_ROWS, "pruned_failed_count": pruned})
    }))
}
