//! Dead letters as they are read: a page in Queen's shape with the count
//! of every match (`dlq_list`; `dlq_messages`, deprecated, in its own), and
//! a queue's counts. The rows are read as the dead-letter writer reads them
//! (`engine::dlq`).

use pgrx::spi::SpiClient;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::engine::dlq::{pruned_failed_count, read_rows, DeadLetter};
use crate::pg::spi::{self, exec};
use crate::query;

/// Dead letters matching the filters, newest failure first, one page, and
/// the count of every match.
#[allow(clippy::too_many_arguments)]
pub fn list(
    client: &mut SpiClient<'_>,
    queue_id: Option<i64>,
    group: Option<&str>,
    partition: Option<&str>,
    from: Option<pgrx::datum::TimestampWithTimeZone>,
    to: Option<pgrx::datum::TimestampWithTimeZone>,
    limit: i64,
    offset: i64,
) -> (Vec<DeadLetter>, i64) {
    let total = matched(client, queue_id, group, partition, from, to);
    let rows = page_rows(client, queue_id, group, partition, from, to, limit, offset);
    (rows, total)
}

/// How many dead letters match the filters.
pub fn matched(
    client: &mut SpiClient<'_>,
    queue_id: Option<i64>,
    group: Option<&str>,
    partition: Option<&str>,
    from: Option<pgrx::datum::TimestampWithTimeZone>,
    to: Option<pgrx::datum::TimestampWithTimeZone>,
) -> i64 {
    exec(
        client,
        query!("dlq_list"),
        &[
            spi::INT8,
            spi::TEXT,
            spi::TIMESTAMPTZ,
            spi::TIMESTAMPTZ,
            spi::TEXT,
        ],
        &[
            queue_id.into(),
            group.into(),
            from.into(),
            to.into(),
            partition.into(),
        ],
    )
    .next()
    .and_then(|r| spi::opt(&r, "total"))
    .unwrap_or(0)
}

/// A queue's counts: partitions, live messages, live dead letters, and the
/// dead letters DLQ retention removed (cumulative).
pub fn queue_counts(c: &mut SpiClient<'_>, queue: &str, qid: i64) -> Value {
    let row = exec(c, query!("dlq_queue_counts"), &[spi::INT8], &[qid.into()])
        .next()
        .unwrap();
    let partitions: i64 = spi::col(&row, "partitions");
    let messages: i64 = spi::col(&row, "messages");
    let failed: i64 = spi::col(&row, "failed");
    let pruned = pruned_failed_count(c, qid);
    json!({
        "queue": queue,
        "partitions": partitions,
        "messages": messages,
        "failed": failed,
        "pruned_failed": pruned,
        "failed_total": failed + pruned,
    })
}

/// A dead letter as Queen's server lists it: the row `id`, the group as
/// `__QUEUE_MODE__` in queue mode, `createdAt` the failure time; with this
/// extension's `offset`, `messageId`, `traceId` and the push time
/// (`messageCreatedAt`) beside.
#[derive(Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListedDeadLetter {
    pub id: String,
    pub transaction_id: String,
    pub partition_id: String,
    pub queue: String,
    pub partition: String,
    pub consumer_group: String,
    pub error_message: Option<String>,
    pub retry_count: i32,
    pub data: Box<RawValue>,
    pub producer_sub: Option<String>,
    pub created_at: String,
    pub failed_at: String,
    pub offset: i64,
    pub message_id: Option<String>,
    pub trace_id: Option<String>,
    pub message_created_at: Option<String>,
}

impl From<DeadLetter> for ListedDeadLetter {
    fn from(d: DeadLetter) -> ListedDeadLetter {
        ListedDeadLetter {
            id: d.id.to_string(),
            transaction_id: d.transaction_id,
            partition_id: d.partition_id,
            queue: d.queue,
            partition: d.partition,
            consumer_group: d
                .consumer_group
                .unwrap_or_else(|| crate::wire::QUEUE_MODE.to_owned()),
            error_message: d.error_message,
            retry_count: d.retry_count,
            data: d.data,
            producer_sub: None,
            created_at: d.failed_at.clone(),
            failed_at: d.failed_at,
            offset: d.offset,
            message_id: d.message_id,
            trace_id: d.trace_id,
            message_created_at: d.created_at,
        }
    }
}

/// One page of dead letters matching the filters, newest failure first
/// (no count of every match); queue mode's rows are those of the group
/// `__QUEUE_MODE__`.
#[allow(clippy::too_many_arguments)]
pub fn page(
    client: &mut SpiClient<'_>,
    queue_id: Option<i64>,
    group: Option<&str>,
    partition: Option<&str>,
    from: Option<pgrx::datum::TimestampWithTimeZone>,
    to: Option<pgrx::datum::TimestampWithTimeZone>,
    limit: i64,
    offset: i64,
) -> Vec<ListedDeadLetter> {
    page_rows(client, queue_id, group, partition, from, to, limit, offset)
        .into_iter()
        .map(ListedDeadLetter::from)
        .collect()
}

/// The rows of one page of dead letters (`page`, `list`).
#[allow(clippy::too_many_arguments)]
fn page_rows(
    client: &mut SpiClient<'_>,
    queue_id: Option<i64>,
    group: Option<&str>,
    partition: Option<&str>,
    from: Option<pgrx::datum::TimestampWithTimeZone>,
    to: Option<pgrx::datum::TimestampWithTimeZone>,
    limit: i64,
    offset: i64,
) -> Vec<DeadLetter> {
    let rows = exec(
        client,
        query!("dlq_page"),
        &[
            spi::INT8,
            spi::TEXT,
            spi::TIMESTAMPTZ,
            spi::TIMESTAMPTZ,
            spi::TEXT,
            spi::INT8,
            spi::INT8,
        ],
        &[
            queue_id.into(),
            group.into(),
            from.into(),
            to.into(),
            partition.into(),
            limit.into(),
            offset.into(),
        ],
    );
    read_rows(client, rows)
}
