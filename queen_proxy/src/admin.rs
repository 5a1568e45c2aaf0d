//! Adding a shard. The first shard owns every slot. A shard added later is
//! given its share of the slots that hold nothing yet, taken from the
//! shards that own the most: new queues and namespaces that hash there go
//! to it, and every queue already stored stays where it is (moving one is
//! a drain and switch, docs/scale.md). The slot map is locked against every
//! proxy call while it changes, so no call in flight routes by the old map.

use std::collections::{BTreeMap, BTreeSet};

use pgrx::prelude::*;
use pgrx::spi::Spi;
use queen_datum::JsonOut;
use queen_frames::route::{slot_of, SLOTS};
use serde_json::{json, Value};

use crate::errors;
use crate::remote;

/// Every slot that holds a queue or a KV namespace on some shard.
fn occupied() -> BTreeSet<i32> {
    let mut slots = queue_slots();
    for a in remote::all::<String>("SELECT queen_remote.kv_namespaces_all()::text", &[]) {
        let v = remote::parse("kv_namespaces", &a);
        for ns in v.as_array().into_iter().flatten() {
            if let Some(name) = ns.get("namespace").and_then(Value::as_str) {
                slots.insert(slot_of(name));
            }
        }
    }
    slots
}

/// Every slot that holds a queue on some shard. A shard lists a bounded
/// number of queues per call: each is asked for its next page until every
/// queue it counts has been read.
fn queue_slots() -> BTreeSet<i32> {
    let mut slots = BTreeSet::new();
    let mut offset = 0usize;
    loop {
        let asked = json!({ "offset": offset }).to_string();
        let (mut read, mut more) = (0usize, false);
        for a in remote::all::<String>(
            "SELECT queen_remote.queues_list_all($1::jsonb)::text",
            &[asked.as_str().into()],
        ) {
            let v = remote::parse("queues_list", &a);
            let queues = v.get("queues").and_then(Value::as_array);
            let rows = queues.map_or(0, Vec::len);
            for q in queues.into_iter().flatten() {
                if let Some(name) = q.get("name").and_then(Value::as_str) {
                    slots.insert(slot_of(name));
                }
            }
            let total = v.get("total").and_then(Value::as_u64).unwrap_or(0) as usize;
            read = read.max(rows);
            more |= rows > 0 && offset + rows < total;
        }
        if !more {
            return slots;
        }
        offset += read;
    }
}

/// Adds the shard at `dsn` (a libpq connection string without `user=`:
/// the caller's user mapping names the user) as the next shard: it becomes
/// partition p<n> of the PL/Proxy cluster `queen` (the first creates it),
/// is made shard n (`queen.shard_set(n)` on it, when a user mapping lets
/// the caller reach it; else run that on the shard first) and is given its
/// share of the empty slots.
#[pg_extern(volatile)]
fn shard_add(dsn: &str) -> JsonOut {
    refuse_secrets(dsn);
    Spi::run("LOCK TABLE queen.proxy_slots IN ACCESS EXCLUSIVE MODE").expect("lock the slot map");
    let n = Spi::get_one::<i64>("SELECT pg_catalog.count(*) FROM queen.proxy_shards")
        .expect("count the shards")
        .unwrap_or(0) as i32;
    add_server_partition(n, dsn);
    Spi::run_with_args(
        "INSERT INTO queen.proxy_shards (shard, dsn) VALUES ($1, $2)",
        &[n.into(), dsn.into()],
    )
    .expect("insert the shard");
    let identity = shard_identity(n);
    let moved: Vec<i32> = if n == 0 {
        Spi::run_with_args(
            "INSERT INTO queen.proxy_slots (slot, shard) SELECT s, 0 FROM pg_catalog.generate_series(0, $1 - 1) s",
            &[SLOTS.into()],
        )
        .expect("insert the slots");
        (0..SLOTS).collect()
    } else {
        let moved = share_of_empty_slots(n);
        Spi::run_with_args(
            "UPDATE queen.proxy_slots SET shard = $1 WHERE slot = ANY($2)",
            &[n.into(), moved.clone().into()],
        )
        .expect("move the slots");
        moved
    };
    JsonOut(
        json!({
            "shard": n,
            "slots": moved.len(),
            "identity": identity.map(|i| remote::parse("shard_set", &i)),
        })
        .to_string(),
    )
}

/// Refuses a connection string that names a user or holds a secret.
fn refuse_secrets(dsn: &str) {
    if dsn.contains("user=") {
        errors::raise(
            "22023",
            "dsn: must not name a user (user=): PL/Proxy would then ignore the user mappings",
        );
    }
    if holds_secret(dsn) {
        errors::raise(
            "22023",
            "dsn: must not hold a password or a URI's user: a shard's connection string is \
             readable in pg_foreign_server; put the password in the user mapping",
        );
    }
}

/// Makes `dsn` partition p<n> of the server `queen`, creating the server
/// for the first shard.
fn add_server_partition(n: i32, dsn: &str) {
    let server = Spi::get_one::<bool>(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_foreign_server WHERE srvname = 'queen')",
    )
    .expect("look up the server")
    .unwrap_or(false);
    let quoted =
        Spi::get_one_with_args::<String>("SELECT pg_catalog.quote_literal($1)", &[dsn.into()])
            .expect("quote")
            .expect("quoted");
    if server {
        Spi::run(&format!("ALTER SERVER queen OPTIONS (ADD p{n} {quoted})")).expect("alter server");
    } else {
        if n > 0 {
            errors::raise(
                "55000",
                "the PL/Proxy server queen is gone while shards are listed",
            );
        }
        Spi::run(&format!(
            "CREATE SERVER queen FOREIGN DATA WRAPPER plproxy OPTIONS (modular_mapping '1', p0 {quoted})"
        ))
        .expect("create server");
    }
}

/// The shard's own ids from its range (queen.shard_set on the shard),
/// once the caller can reach the shards: the first shard is added before
/// any user mapping of the new server can exist.
fn shard_identity(n: i32) -> Option<String> {
    let mapped = Spi::get_one::<bool>(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_user_mappings \
                         WHERE srvname = 'queen' AND usename IN (current_user, 'public'))",
    )
    .expect("look up the user mapping")
    .unwrap_or(false);
    if mapped {
        remote::one("SELECT queen_remote.shard_set($1, $1)::text", &[n.into()])
    } else {
        None
    }
}

/// The empty slots shard `n` is given: its share of them, taken one by one
/// from the shard that owns the most and still has an empty slot.
fn share_of_empty_slots(n: i32) -> Vec<i32> {
    let busy = occupied();
    let owners: Vec<i32> = Spi::get_one::<Vec<i32>>(
        "SELECT pg_catalog.array_agg(shard ORDER BY slot) FROM queen.proxy_slots",
    )
    .expect("read the slot map")
    .unwrap_or_default();
    // The empty slots of each shard, and how many each owns.
    let mut free: BTreeMap<i32, Vec<i32>> = BTreeMap::new();
    let mut owned: BTreeMap<i32, usize> = BTreeMap::new();
    for (slot, &shard) in owners.iter().enumerate() {
        *owned.entry(shard).or_default() += 1;
        if !busy.contains(&(slot as i32)) {
            free.entry(shard).or_default().push(slot as i32);
        }
    }
    let share = SLOTS as usize / (n as usize + 1);
    let mut moved = Vec::with_capacity(share);
    while moved.len() < share {
        // From the shard that owns the most and still has an empty slot.
        let Some((&from, _)) = owned
            .iter()
            .filter(|(s, _)| free.get(s).is_some_and(|f| !f.is_empty()))
            .max_by_key(|(s, c)| (**c, std::cmp::Reverse(**s)))
        else {
            break;
        };
        moved.push(free.get_mut(&from).and_then(Vec::pop).expect("a free slot"));
        *owned.get_mut(&from).expect("owner") -= 1;
    }
    moved
}

/// Whether a connection string holds a secret: a password, or a URI's
/// user information (`postgresql://user:secret@host`).
fn holds_secret(dsn: &str) -> bool {
    let lower = dsn.to_ascii_lowercase();
    lower.contains("password") || (lower.contains("://") && lower.contains('@'))
}

/// The shards and how many slots each owns; each shard's connection
/// string only for a role that may read it (the installer and the roles
/// it granted it to; not `queen_app` nor `pg_monitor`).
#[pg_extern(volatile)]
fn shards() -> JsonOut {
    let with_dsn = Spi::get_one::<bool>(
        "SELECT pg_catalog.has_column_privilege('queen.proxy_shards', 'dsn', 'SELECT')",
    )
    .expect("read the caller's rights")
    .unwrap_or(false);
    let sql = if with_dsn {
        "SELECT COALESCE(pg_catalog.json_agg(pg_catalog.json_build_object(
                    'shard', s.shard, 'dsn', s.dsn, 'addedAt', s.added_at,
                    'slots', (SELECT pg_catalog.count(*) FROM queen.proxy_slots p WHERE p.shard = s.shard))
                 ORDER BY s.shard), '[]')::text
           FROM queen.proxy_shards s"
    } else {
        "SELECT COALESCE(pg_catalog.json_agg(pg_catalog.json_build_object(
                    'shard', s.shard, 'addedAt', s.added_at,
                    'slots', (SELECT pg_catalog.count(*) FROM queen.proxy_slots p WHERE p.shard = s.shard))
                 ORDER BY s.shard), '[]')::text
           FROM queen.proxy_shards s"
    };
    let text = Spi::get_one::<String>(sql)
        .expect("list the shards")
        .unwrap_or_else(|| "[]".to_owned());
    JsonOut(text)
}
