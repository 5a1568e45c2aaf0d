//! Streaming queries: a client's operator chain (windows, aggregates) runs
//! in the client; the database keeps each query's registration and its
//! state per source partition, and commits a **cycle** whole: the state
//! writes, the pushes to the sink queues and the ack of the source batch in
//! one transaction (`cycle`). The bodies and answers are those of the
//! queen-mq clients' streaming SDK (`/streams/v1/...`), read in `wire`.

pub mod cycle;
pub mod wire;

use pgrx::spi::SpiClient;
use serde_json::{json, Value};

use crate::pg::errors;
use crate::pg::spi::{self, exec};
use crate::pg::time;
use crate::query;

/// Registers a query by name, or finds it: the same operator chain's hash
/// answers the same id with the state as it was; another hash is refused
/// (`success` false, `conflict` true) unless `reset`, which deletes every
/// state row of the query and stores the new hash under the same id.
pub fn register(client: &mut SpiClient<'_>, r: &wire::Register) -> Value {
    if let Some(id) = insert(client, r) {
        return answer(r, id, true, false);
    }
    let (id, stored_hash, unchanged) = lock_registered(client, r);
    if stored_hash != r.config_hash && !r.reset {
        return conflict(r, id);
    }
    let reset = stored_hash != r.config_hash;
    if reset {
        exec(
            client,
            query!("streams_state_wipe"),
            &[spi::UUID],
            &[id.into()],
        );
    }
    if !unchanged {
        exec(
            client,
            query!("streams_register_update"),
            &[spi::UUID, spi::TEXT, spi::TEXT, spi::TEXT],
            &[
                id.into(),
                r.source_queue.as_str().into(),
                r.sink_queue.as_deref().into(),
                r.config_hash.as_str().into(),
            ],
        );
    }
    answer(r, id, false, reset)
}

/// Inserts the query's registration; its new id, None when the name is
/// registered already.
fn insert(client: &mut SpiClient<'_>, r: &wire::Register) -> Option<pgrx::Uuid> {
    exec(
        client,
        query!("streams_register_insert"),
        &[spi::TEXT, spi::TEXT, spi::TEXT, spi::TEXT],
        &[
            r.name.as_str().into(),
            r.source_queue.as_str().into(),
            r.sink_queue.as_deref().into(),
            r.config_hash.as_str().into(),
        ],
    )
    .next()
    .map(|row| spi::col(&row, "id"))
}

/// The registration of the query's name, locked: its id, its stored hash
/// and whether it already holds what `r` registers.
fn lock_registered(client: &mut SpiClient<'_>, r: &wire::Register) -> (pgrx::Uuid, String, bool) {
    let row = exec(
        client,
        query!("streams_register_lock"),
        &[spi::TEXT],
        &[r.name.as_str().into()],
    )
    .next()
    // Deleted between the insert and the lock: the caller tries again.
    .unwrap_or_else(|| {
        errors::retry_needed(format!(
            "stream query {:?} was deleted while it was registered; retry",
            r.name
        ))
    });
    let id: pgrx::Uuid = spi::col(&row, "id");
    let stored_hash: String = spi::col(&row, "config_hash");
    let unchanged = stored_hash == r.config_hash
        && spi::col::<String>(&row, "source_queue") == r.source_queue
        && spi::opt::<String>(&row, "sink_queue") == r.sink_queue;
    (id, stored_hash, unchanged)
}

/// The answer refusing a registration whose operator chain changed.
fn conflict(r: &wire::Register, id: pgrx::Uuid) -> Value {
    json!({
        "success": false,
        "conflict": true,
        "query_id": id.to_string(),
        "name": r.name,
        "error": format!(
            "config_hash mismatch: operator chain changed for queryId '{}'. \
             Pass reset:true to wipe existing state, or use a new queryId.",
            r.name
        ),
    })
}

fn answer(r: &wire::Register, id: pgrx::Uuid, fresh: bool, reset: bool) -> Value {
    json!({
        "success": true,
        "query_id": id.to_string(),
        "name": r.name,
        "config_hash": r.config_hash,
        "fresh": fresh,
        "reset": reset,
    })
}

/// The state rows of a query in one source partition, sorted by key,
/// filtered as `g` asks; a read of more than `queen.stream_max_rows` rows
/// is refused (54000) rather than cut short.
pub fn state_get(client: &mut SpiClient<'_>, g: &wire::StateGet) -> String {
    let max = crate::pg::settings::stream_max_rows();
    let prefix_end = g.key_prefix.as_deref().map(|p| {
        past_prefix(p).unwrap_or_else(|| {
            errors::invalid("key_prefix", "has no string after every key it starts")
        })
    });
    let row = exec(
        client,
        query!("streams_state_get"),
        &[
            spi::UUID,
            spi::INT8,
            spi::TEXT_ARRAY,
            spi::TEXT,
            spi::TEXT,
            spi::INT8,
            spi::TEXT,
        ],
        &[
            g.query_id.into(),
            g.partition_id.into(),
            g.keys.clone().into(),
            g.key_prefix.as_deref().into(),
            g.ripe_at_or_before.map(|v| v.to_string()).into(),
            max.into(),
            prefix_end.into(),
        ],
    )
    .next()
    .expect("an aggregate answers one row");
    if spi::col::<i64>(&row, "n") > max {
        errors::program_limit(
            "keys",
            format!(
                "the read matches more than queen.stream_max_rows ({max}) state rows; \
                 name keys or a key_prefix"
            ),
        );
    }
    spi::col(&row, "answer")
}

/// The first string, in byte order (the keys' collation is "C"), after
/// every string that starts with `prefix`: its last character that can be
/// incremented, incremented, and what follows dropped. None when every
/// character is the last one.
fn past_prefix(prefix: &str) -> Option<String> {
    let mut chars: Vec<char> = prefix.chars().collect();
    while let Some(last) = chars.pop() {
        let next = (last as u32 + 1..=char::MAX as u32).find_map(char::from_u32);
        if let Some(next) = next {
            chars.push(next);
            return Some(chars.into_iter().collect());
        }
    }
    None
}

/// The registered queries by name after `after`, at most `limit`, each with
/// its state rows counted up to `queen.stream_max_rows`.
pub fn list(client: &mut SpiClient<'_>, after: Option<&str>, limit: i64) -> Value {
    let cap = crate::pg::settings::stream_max_rows();
    let queries: Vec<Value> = exec(
        client,
        query!("streams_list"),
        &[spi::TEXT, spi::INT8, spi::INT8],
        &[after.into(), limit.into(), cap.into()],
    )
    .map(|row| {
        let rows: i64 = spi::col(&row, "rows");
        json!({
            "query_id": spi::col::<pgrx::Uuid>(&row, "id").to_string(),
            "name": spi::col::<String>(&row, "name"),
            "source_queue": spi::col::<String>(&row, "source_queue"),
            "sink_queue": spi::opt::<String>(&row, "sink_queue"),
            "config_hash": spi::col::<String>(&row, "config_hash"),
            "created_at": time::micros_to_iso(spi::col(&row, "created_us")),
            "updated_at": time::micros_to_iso(spi::col(&row, "updated_us")),
            "state_rows": rows,
            "state_rows_capped": rows >= cap,
            "state_partitions": spi::col::<i64>(&row, "partitions"),
            "state_bytes": spi::col::<i64>(&row, "bytes"),
            "state_written_at": time::micros_to_iso_or_null(spi::opt(&row, "written_us")),
        })
    })
    .collect();
    let next = (queries.len() as i64 == limit)
        .then(|| queries.last().map(|q| q["name"].clone()))
        .flatten();
    json!({ "queries": queries, "next": next })
}

/// Deletes the query named `name` with its state: `deleted` false when
/// there is no such query.
pub fn delete(client: &mut SpiClient<'_>, name: &str) -> Value {
    let row = exec(
        client,
        query!("streams_delete"),
        &[spi::TEXT],
        &[name.into()],
    )
    .next();
    match row {
        Some(row) => json!({
            "success": true,
            "deleted": true,
            "name": name,
            "query_id": spi::col::<pgrx::Uuid>(&row, "id").to_string(),
            "state_rows": spi::col::<i64>(&row, "rows"),
        }),
        None => json!({ "success": true, "deleted": false, "name": name }),
    }
}

#[cfg(test)]
mod tests {
    use super::past_prefix;

    #[test]
    fn the_string_past_a_prefix_sorts_after_every_key_it_starts_and_before_the_next() {
        assert_eq!(past_prefix("tumb\u{1f}").as_deref(), Some("tumb\u{20}"));
        assert_eq!(past_prefix("a\u{10FFFF}").as_deref(), Some("b"));
        // The surrogates are no characters: the next after U+D7FF is U+E000.
        assert_eq!(past_prefix("\u{D7FF}").as_deref(), Some("\u{E000}"));
        assert_eq!(past_prefix("\u{10FFFF}\u{10FFFF}"), None);
        for key in [
            "tumb\u{1f}",
            "tumb\u{1f}2026",
            "tumb\u{1f}\u{10FFFF}\u{10FFFF}",
        ] {
            assert!(key.as_bytes() < past_prefix("tumb\u{1f}").unwrap().as_bytes());
        }
        assert!("tumb\u{20}".as_bytes() >= past_prefix("tumb\u{1f}").unwrap().as_bytes());
    }
}
