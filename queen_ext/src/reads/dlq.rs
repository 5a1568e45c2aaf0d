//! Dead letters as they are read: a page in Queen's shape with the count
//! of every match (`dlq_list`; `dlq_messages`, deprecated, in its own), and
//! a queue's counts. The rows are read as the dead-letter writer reads them
//! (`engine::dlq`).

use pgrx::datum::TimestampWithTimeZone;
use pgrx::spi::SpiClient;
use serde_json::value::RawValue;
use serde_json::{json, Value};

use crate::engine::dlq::{pruned_failed_count, read_rows, DeadLetter};
use crate::pg::spi::{self, exec};
use crate::query;

/// What a dead-letter listing asks: the rows of a queue (all with None),
/// of a group, of a partition, failed from and to, and the page.
pub struct Filter<'a> {
    pub queue_id: Option<i64>,
    pub group: Option<&'a str>,
    pub partition: Option<&'a str>,
    pub from: Option<TimestampWithTimeZone>,
    pub to: Option<TimestampWithTimeZone>,
    pub limit: i64,
    pub offset: i64,
}

/// Dead letters matching the filter, newest failure first, one page, and
/// the count of every match.
pub fn list(client: &mut SpiClient<'_>, f: &Filter<'_>) -> (Vec<DeadLetter>, i64) {
    let total = exec(
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
            f.queue_id.into(),
            f.group.into(),
            f.from.into(),
            f.to.into(),
            f.partition.into(),
        ],
    )
    .next()
    .and_then(|r| spi::opt(&r, "total"))
    .unwrap_or(0);
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
            f.queue_id.into(),
            f.group.into(),
            f.from.into(),
            f.to.into(),
            f.partition.into(),
            f.limit.into(),
            f.offset.into(),
        ],
    );
    (read_rows(client, rows), total)
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
