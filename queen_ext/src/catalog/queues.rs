//! Queue identity: resolving names to rows, creating a queue on first use,
//! and reading and writing its options. Identity is (tenant_id, name).

use std::collections::HashMap;
use std::sync::OnceLock;

use pgrx::spi::SpiClient;
use pgrx::JsonB;
use serde_json::{Map, Value};

use crate::catalog::options::{columns, KeptOptions, QueueOptions};
use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::query;
use crate::wire::json::check_name;

pub const DEFAULT_TENANT: &str = "00000000-0000-0000-0000-000000000001";

#[derive(Debug, Clone)]
pub struct QueueRow {
    pub id: i64,
    pub name: String,
    pub options: QueueOptions,
}

/// [`DEFAULT_TENANT`] as a datum.
pub fn default_tenant() -> pgrx::Uuid {
    pgrx::Uuid::from_bytes([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])
}

/// The options keyed by column name, the shape jsonb_populate_record reads.
fn column_json(o: &QueueOptions) -> Value {
    let body = o.to_json();
    let mut out = Map::new();
    for (key, column) in columns() {
        out.insert(column.clone(), body[key.as_str()].clone());
    }
    Value::Object(out)
}

fn from_row_json(row: &Value) -> QueueOptions {
    let mut body = Map::new();
    for (key, column) in columns() {
        body.insert(
            key.clone(),
            row.get(column.as_str()).cloned().unwrap_or(Value::Null),
        );
    }
    QueueOptions::apply(&QueueOptions::default(), &body, "stored options")
}

fn column_list() -> String {
    columns()
        .iter()
        .map(|(_, c)| c.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The option columns read out of `jsonb_populate_record(...) r`.
fn picked_list() -> String {
    columns()
        .iter()
        .map(|(_, c)| format!("r.{c}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn insert_sql() -> &'static str {
    static SQL: OnceLock<String> = OnceLock::new();
    SQL.get_or_init(|| {
        let (cols, picked) = (column_list(), picked_list());
        format!(
            "INSERT INTO queen.queues (tenant_id, name, {cols}) \
             SELECT $1, $2, {picked} FROM jsonb_populate_record(NULL::queen.queues, $3) r \
             ON CONFLICT (tenant_id, name) DO NOTHING RETURNING id"
        )
    })
}

fn update_sql() -> &'static str {
    static SQL: OnceLock<String> = OnceLock::new();
    SQL.get_or_init(|| {
        let (cols, picked) = (column_list(), picked_list());
        format!(
            "UPDATE queen.queues q SET ({cols}) = \
             (SELECT {picked} FROM jsonb_populate_record(NULL::queen.queues, $2) r), updated_at = now() \
             WHERE q.id = $1"
        )
    })
}

/// Creates the queue with `options` unless it exists; true when it was created.
pub fn insert(client: &mut SpiClient<'_>, name: &str, options: &QueueOptions) -> bool {
    let rows = exec(
        client,
        insert_sql(),
        &[spi::UUID, spi::TEXT, spi::JSONB],
        &[
            default_tenant().into(),
            name.into(),
            JsonB(column_json(options)).into(),
        ],
    );
    !rows.is_empty()
}

pub fn update(client: &mut SpiClient<'_>, id: i64, options: &QueueOptions) {
    exec(
        client,
        update_sql(),
        &[spi::INT8, spi::JSONB],
        &[id.into(), JsonB(column_json(options)).into()],
    );
}

/// The queue named `name`, with its options.
pub fn find(client: &mut SpiClient<'_>, name: &str) -> Option<QueueRow> {
    let rows = exec(
        client,
        query!("queues_find"),
        &[spi::UUID, spi::TEXT],
        &[default_tenant().into(), name.into()],
    );
    let row = rows.into_iter().next()?;
    let id: i64 = spi::col(&row, "id");
    let JsonB(json) = spi::col::<JsonB>(&row, "to_jsonb");
    Some(QueueRow {
        id,
        name: name.to_owned(),
        options: from_row_json(&json),
    })
}

/// Ids and dedup windows of the named queues, creating the missing ones in
/// name order (the declared order of provisioning inserts).
pub fn resolve_for_push(client: &mut SpiClient<'_>, names: &[&str]) -> HashMap<String, (i64, i32)> {
    const SELECT: &str = query!("queues_resolve_for_push");
    let names_vec: Vec<&str> = names.to_vec();
    let read = |client: &mut SpiClient<'_>| {
        let mut out = HashMap::new();
        for row in exec(
            client,
            SELECT,
            &[spi::UUID, spi::TEXT_ARRAY],
            &[default_tenant().into(), names_vec.clone().into()],
        ) {
            let name: String = spi::col(&row, "name");
            let id: i64 = spi::col(&row, "id");
            let window: i32 = spi::col(&row, "dedup_window_seconds");
            out.insert(name, (id, window));
        }
        out
    };
    let mut found = read(client);
    if found.len() < names.len() {
        let mut missing: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| !found.contains_key(*n))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        for name in missing {
            insert(client, name, &QueueOptions::default());
        }
        found = read(client);
    }
    found
}

/// The id of the queue named `name`; an ERROR naming it when there is none
/// (42704) or the name is not one (22023).
pub fn require_id(client: &mut SpiClient<'_>, name: &str) -> i64 {
    let name = check_name("queue", name);
    find(client, name)
        .unwrap_or_else(|| errors::undefined("queue", name))
        .id
}

/// The queue a partition belongs to; None when the partition is gone.
pub fn of_partition(client: &mut SpiClient<'_>, partition_id: i64) -> Option<i64> {
    exec(
        client,
        "SELECT queue_id FROM queen.log_partitions WHERE id = $1",
        &[spi::INT8],
        &[partition_id.into()],
    )
    .next()
    .and_then(|r| spi::opt::<i64>(&r, "queue_id"))
}

/// Every option of a queue as a reader answers them: its options and the
/// kept ones (Queen's options queen stores without acting on them).
pub fn answered_options(client: &mut SpiClient<'_>, q: &QueueRow) -> Value {
    with_kept(q.options.to_json(), &kept_options(client, q.id))
}

/// `options` with the kept options beside them.
pub fn with_kept(mut options: Value, kept: &KeptOptions) -> Value {
    if let (Some(all), Value::Object(more)) = (options.as_object_mut(), kept.to_json()) {
        all.extend(more);
    }
    options
}

/// Whether the schema keeps the options queen does not act on (0.3.0).
pub fn kept_options_present() -> bool {
    spi::queen_table_exists(c"queue_kept_options")
}

/// The kept options of a queue (defaults when none were stored, or on a
/// schema without the table).
pub fn kept_options(client: &mut SpiClient<'_>, id: i64) -> KeptOptions {
    if !kept_options_present() {
        return KeptOptions::default();
    }
    exec(
        client,
        query!("queues_kept_options"),
        &[spi::INT8],
        &[id.into()],
    )
    .next()
    .map(|r| KeptOptions::from_json(&spi::col::<JsonB>(&r, "options").0))
    .unwrap_or_default()
}

/// Stores the kept options of a queue: a row when they differ from the
/// defaults, none otherwise. On a schema without the table (0.2.0 before
/// its update) options other than the defaults are refused: they could not
/// be answered back.
pub fn write_kept_options(client: &mut SpiClient<'_>, id: i64, kept: &KeptOptions) {
    let default = *kept == KeptOptions::default();
    if !kept_options_present() {
        if !default {
            errors::raise(
                "55000",
                "ttl and retentionSinkHoldMaxSeconds are kept from extension 0.3.0 on: \
                 run ALTER EXTENSION queen UPDATE",
            );
        }
        return;
    }
    if default {
        exec(
            client,
            query!("queues_kept_options_clear"),
            &[spi::INT8],
            &[id.into()],
        );
    } else {
        exec(
            client,
            query!("queues_kept_options_write"),
            &[spi::INT8, spi::JSONB],
            &[id.into(), JsonB(kept.to_json()).into()],
        );
    }
}

/// A number that grows whenever a message is pushed to the queue `queue`,
/// or (queue NULL) to any queue carrying `namespace` / `task`; 0 for a queue
/// that does not exist.
pub fn version(
    c: &mut SpiClient<'_>,
    queue: Option<&str>,
    namespace: Option<&str>,
    task: Option<&str>,
) -> i64 {
    exec(
        c,
        query!("queues_version"),
        &[spi::UUID, spi::TEXT, spi::TEXT, spi::TEXT],
        &[
            default_tenant().into(),
            queue.into(),
            namespace.into(),
            task.into(),
        ],
    )
    .next()
    .and_then(|r| spi::opt::<i64>(&r, "version"))
    .unwrap_or(0)
}
