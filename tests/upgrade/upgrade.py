"""The upgrade test (scripts/upgrade.sh starts its cluster and runs it).

A database is created at the previous version (CREATE EXTENSION queen
VERSION '0.3.0', from the install script kept as tests/upgrade/
queen--0.3.0.sql) and filled: queues with options, segments in several
partitions, a consumer group part-way, open leases, dead letters, KV rows,
locks, timers; the privileges of three functions are then changed by hand.
Every reader's answer and every table's rows are recorded, the extension is
updated in place (ALTER EXTENSION queen UPDATE), and then:

- the extension is at the new version and every answer and row reads the same;
- the messages pop and ack as they would have: leases taken before the
  update renew and ack, the group goes on from its cursor, dead letters retry;
- the workers run: a timer due now fires into its queue, and the
  maintenance lease rows advance;
- every C symbol an install or update script ever declared is still in the
  library, with the argument types the current version declares it with
  (symbols.py: a database not yet updated calls the new library through
  them);
- the schema equals a fresh CREATE EXTENSION queen in a second database:
  functions, tables, columns, indexes, constraints, sequences, views,
  types, privileges and extension membership, with OIDs normalised away
  (so the update put the privileges changed by hand back).

    upgrade.py DB                 the test, on database DB of the cluster
    upgrade.py compare DB_A DB_B  only the schema comparison of two databases
"""

import difflib
import json
import os
import sys

import psycopg

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "faults"))
sys.path.insert(0, os.path.dirname(__file__))

import cluster  # noqa: E402
import symbols  # noqa: E402

OLD = "0.3.0"
FRESH_DB = "queen_fresh"
HERE = os.path.dirname(os.path.abspath(__file__))
# Every script that ever declared a function of the library.
SCRIPTS = [os.path.join(HERE, "..", "..", "queen_ext", "sql", "queen--*.sql"),
           os.path.join(HERE, "queen--*.sql")]


def dsn(db):
    return f"host=127.0.0.1 port={cluster.PORT} user=postgres dbname={db}"


def connect(db):
    return psycopg.connect(dsn(db), autocommit=True)


def say(msg):
    print(f"upgrade: {msg}", flush=True)


class Failed(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Failed(what)
    say(f"ok: {what}")


def one(conn, sql, params=None):
    return conn.execute(sql, params).fetchone()[0]


def recreate(db):
    with connect("postgres") as c:
        c.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")
        c.execute(f"CREATE DATABASE {db}")


# --- the schema as catalogue rows, without OIDs -----------------------------

SCHEMAS = "('queen', 'queen_internal')"

CATALOGUE = {
    "extension": """
        SELECT e.extname, e.extversion, e.extrelocatable, e.extnamespace::regnamespace::text,
               (SELECT array_agg(c::regclass::text ORDER BY 1) FROM unnest(e.extconfig) c)::text,
               e.extcondition::text
          FROM pg_extension e WHERE e.extname = 'queen'""",
    "schemas": """
        SELECT n.nspname, n.nspowner::regrole::text,
               (SELECT string_agg(a::text, ',' ORDER BY a::text) FROM unnest(n.nspacl) a)
          FROM pg_namespace n WHERE n.nspname IN """ + SCHEMAS,
    "functions": """
        SELECT n.nspname, p.proname, pg_get_function_arguments(p.oid),
               pg_get_function_result(p.oid), p.prokind, l.lanname, p.provolatile,
               p.proisstrict, p.prosecdef, p.proleakproof, p.proparallel, p.procost,
               p.prorows, p.proretset, p.proconfig::text, p.proowner::regrole::text,
               (SELECT string_agg(a::text, ',' ORDER BY a::text) FROM unnest(p.proacl) a),
               CASE WHEN l.lanname = 'c' THEN p.probin || ' ' || p.prosrc
                    ELSE regexp_replace(p.prosrc, '\\s+', ' ', 'g') END
          FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
          JOIN pg_language l ON l.oid = p.prolang
         WHERE n.nspname IN """ + SCHEMAS,
    "relations": """
        SELECT n.nspname, c.relname, c.relkind, c.relpersistence, c.reloptions::text,
               c.relowner::regrole::text, c.relrowsecurity, c.relreplident,
               (SELECT string_agg(a::text, ',' ORDER BY a::text) FROM unnest(c.relacl) a)
          FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname IN """ + SCHEMAS + " AND c.relkind <> 'i'",
    # Column order is not compared: a column an update adds comes last,
    # wherever a fresh install puts it; queen names its columns. The server
    # this runs on stamps a pg_attver option on every column it creates, a
    # number of its own: left out.
    "columns": """
        SELECT n.nspname, c.relname, a.attname, format_type(a.atttypid, a.atttypmod), a.attnotnull,
               pg_get_expr(d.adbin, d.adrelid), a.attidentity, a.attgenerated, a.attstorage,
               a.attcompression, co.collname,
               (SELECT string_agg(o, ',' ORDER BY o) FROM unnest(a.attoptions) o
                 WHERE o NOT LIKE 'pg\\_attver=%'),
               (SELECT string_agg(x::text, ',' ORDER BY x::text) FROM unnest(a.attacl) x)
          FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace
          LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
          LEFT JOIN pg_collation co ON co.oid = a.attcollation AND a.attcollation <> 0
         WHERE n.nspname IN """ + SCHEMAS + """ AND a.attnum > 0 AND NOT a.attisdropped
           AND c.relkind IN ('r', 'p', 'v', 'm', 'f', 'c')""",
    "indexes": """
        SELECT schemaname, tablename, indexname, indexdef, tablespace
          FROM pg_indexes WHERE schemaname IN """ + SCHEMAS,
    "constraints": """
        SELECT n.nspname, c.relname, con.conname, con.contype, pg_get_constraintdef(con.oid),
               con.condeferrable, con.condeferred, con.convalidated
          FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname IN """ + SCHEMAS,
    "sequences": """
        SELECT schemaname, sequencename, sequenceowner, data_type::text, start_value, min_value,
               max_value, increment_by, cycle, cache_size
          FROM pg_sequences WHERE schemaname IN """ + SCHEMAS,
    "views": """
        SELECT schemaname, viewname, viewowner, definition
          FROM pg_views WHERE schemaname IN """ + SCHEMAS,
    "types": """
        SELECT n.nspname, t.typname, t.typtype, t.typcategory, t.typowner::regrole::text,
               format_type(t.typelem, NULL), t.typrelid::regclass::text
          FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
         WHERE n.nspname IN """ + SCHEMAS,
    "triggers": """
        SELECT tg.tgrelid::regclass::text, tg.tgname, pg_get_triggerdef(tg.oid)
          FROM pg_trigger tg JOIN pg_class c ON c.oid = tg.tgrelid
          JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname IN """ + SCHEMAS + " AND NOT tg.tgisinternal",
    "rules and policies": """
        SELECT 'rule', schemaname, tablename, rulename, definition
          FROM pg_rules WHERE schemaname IN """ + SCHEMAS + """
        UNION ALL
        SELECT 'policy', schemaname, tablename, policyname, qual
          FROM pg_policies WHERE schemaname IN """ + SCHEMAS,
    "default privileges": """
        SELECT da.defaclrole::regrole::text, da.defaclnamespace::regnamespace::text,
               da.defaclobjtype, da.defaclacl::text
          FROM pg_default_acl da""",
    "extension members": """
        SELECT pg_describe_object(d.classid, d.objid, d.objsubid)
          FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
         WHERE d.refclassid = 'pg_extension'::regclass AND e.extname = 'queen'
           AND d.deptype = 'e'""",
    "dependencies": """
        SELECT pg_describe_object(d.classid, d.objid, d.objsubid), d.deptype,
               pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid)
          FROM pg_depend d
         WHERE d.deptype IN ('a', 'i') AND d.classid = 'pg_class'::regclass
           AND d.objid IN (SELECT c.oid FROM pg_class c
                             JOIN pg_namespace n ON n.oid = c.relnamespace
                            WHERE n.nspname IN """ + SCHEMAS + " AND c.relkind = 'S')",
    "comments": """
        SELECT pg_describe_object(ds.classoid, ds.objoid, ds.objsubid), ds.description
          FROM pg_description ds JOIN pg_depend d ON d.classid = ds.classoid AND d.objid = ds.objoid
          JOIN pg_extension e ON e.oid = d.refobjid
         WHERE d.refclassid = 'pg_extension'::regclass AND e.extname = 'queen'
           AND d.deptype = 'e'""",
}


def catalogue(db):
    """Every section of the schema as sorted lines of text."""
    out = {}
    with connect(db) as c:
        for name, sql in CATALOGUE.items():
            rows = c.execute(sql).fetchall()
            out[name] = sorted(" | ".join("" if v is None else str(v) for v in r) for r in rows)
    return out


def diff_sections(a, b, label_a, label_b):
    """The unified differences of two {section: lines}, one block per section."""
    text = []
    for name in a.keys() | b.keys():
        la, lb = a.get(name, []), b.get(name, [])
        if la != lb:
            text.append(f"--- {name}")
            text.extend(difflib.unified_diff(la, lb, label_a, label_b, lineterm="", n=1))
    return "\n".join(text)


def compare(db_a, db_b, ignore_version=False):
    """The schema differences of two databases ('' when none), and the
    first database's catalogue."""
    a, b = catalogue(db_a), catalogue(db_b)
    if ignore_version:
        a.pop("extension"), b.pop("extension")
    return diff_sections(a, b, db_a, db_b), a


# --- what the database holds, read before and after the update --------------

TABLES = [
    "queues", "log_partitions", "log_segments", "log_txns", "log_consumers", "consumer_groups",
    "log_dlq", "queue_terminal_rollups", "retention_history", "log_timers", "log_timers_failed",
    "kv", "kv_usage", "kv_quota",
]

# Answers that vary with the clock, left out: retention's cutoffs, the
# overview's time of reading, throughput of the last minutes and time lag,
# the groups' time lag.
VOLATILE = {"cutoffs", "timestamp", "throughput", "time", "maxTimeLag", "timeLagSeconds"}


def stable(v):
    if isinstance(v, dict):
        return {k: stable(x) for k, x in v.items() if k not in VOLATILE}
    if isinstance(v, list):
        return [stable(x) for x in v]
    return v


def readers(conn, ids):
    """What every reader answers, as {call: JSON text}."""
    kv = {"operations": [{"op": "getMany", "ns": "up", "keys": ["a", "b", "n"]},
                         {"op": "getPrefix", "ns": "up", "prefix": "k:"}]}
    locks = {"operations": [{"op": "get", "name": "nightly"}, {"op": "get", "name": "pool"}]}
    calls = [
        "queen.overview()", "queen.list_queues()", "queen.consumer_groups_list()",
        "queen.dlq_messages()", """queen.dlq_messages('{"consumerGroup": "audit"}')""",
        "queen.retention_timeseries('2000-01-01')", "queen.timers_set_aside()",
        "queen.kv_usage()", "queen.consumer_group_get('billing')",
        "queen.consumer_group_get('audit')", "queen.kv_get('up', 'a')", "queen.kv_get('up', 'b')",
        f"queen.kv('{json.dumps(kv)}')", f"queen.locks('{json.dumps(locks)}')",
        f"queen.get_dlq_message({ids['p2']}, 'p2-0')",
        f"queen.get_dlq_message({ids['p3']}, 'p3-0')",
        "to_json(queen.queue_version(NULL, 'shop'))",
        "queen.ephemeral_queues()", "queen.ephemeral_depth('up_eph')",
        "queen.ephemeral_depth('up_eph', 'g')",
    ]
    for q in ("up_orders", "up_events", "up_dedup", "up_empty"):
        calls += [f"queen.get_queue('{q}')", f"queen.queue_counts('{q}')",
                  f"queen.retention_explain('{q}')", f"to_json(queen.queue_version('{q}'))"]
    return {call: json.dumps(stable(one(conn, f"SELECT {call}")), sort_keys=True)
            for call in calls}


# Columns of the old version that the update drops: log_partitions.last_offset
# (0.5.0), the last offset being the newest segment's end since; log_timers'
# claim stamp (0.10.0), a timer's claims being rows of log_timer_claims since
# (the names are left out of every table: log_timers_failed's attempts and
# errors are compared through queen.timers_set_aside()).
DROPPED = ["last_offset", "claim_token", "claimed_until", "attempts", "last_error"]
# Columns an update adds with a value for every row it finds:
# consumer_groups.conflation (0.11.0), false for every group registered
# before it; the readers (compared too) say so.
ADDED = ["conflation"]
# Sequences an update adds and draws from, numbering the rows it moves:
# log_cursors' ids (0.5.0, the cursors of queen.log_consumers).
ADDED_SEQUENCES = ["log_cursors_id_seq"]


def tables(conn):
    """Every row of the tables that hold the data, as text."""
    out = {}
    for t in TABLES:
        # Columns an update drops or adds are left out on both sides: what
        # they say, the readers' answers (compared too) say.
        rows = conn.execute(f"SELECT (to_jsonb(t) - %s::text[])::text FROM queen.{t} t ORDER BY 1",
                            (DROPPED + ADDED,)).fetchall()
        out[t] = [r[0] for r in rows]
    # The sequences drawn from: one the update adds has not been yet (or
    # numbers the rows the update moves into its table: ADDED_SEQUENCES),
    # and the schema comparison checks that it exists.
    out["sequences"] = [f"{r[0]} {r[1]}" for r in conn.execute(
        "SELECT sequencename, last_value FROM pg_sequences"
        " WHERE schemaname = 'queen' AND last_value IS NOT NULL AND sequencename <> ALL(%s) ORDER BY 1",
        (ADDED_SEQUENCES,))]
    return out


def snapshot(conn, ids):
    snap = {"readers": [f"{k} = {v}" for k, v in sorted(readers(conn, ids).items())]}
    snap.update(tables(conn))
    return snap


# --- the calls the data is made and used with ---------------------------------

def pop(c, queue, partition, group, batch, options="{}"):
    return one(c, "SELECT queen.pop(%s, %s, %s, %s, %s::jsonb)",
               (queue, partition, group, batch, options))


def ack(c, popped, status, group=None, error=None):
    """Acks every message of a pop answer; answers the ack results."""
    body = [{"transactionId": m["transactionId"], "partitionId": m["partitionId"],
             "leaseId": m["leaseId"], "status": status, "consumerGroup": group, "error": error}
            for m in popped["messages"]]
    return one(c, "SELECT queen.ack(%s::jsonb)", (json.dumps(body),))


def txns(popped):
    return [m["transactionId"] for m in popped["messages"]]


def call(c, sql, body):
    """A call taking one JSON body: queen.kv, queen.locks, queen.timers, queen.push."""
    return one(c, f"SELECT {sql}(%s::jsonb)", (json.dumps(body),))


def maintenance_token(c):
    return one(c, "SELECT COALESCE(max(fencing_token), 0) FROM queen.maintenance_leases"
                  " WHERE task = 'retention'")


# --- the data -----------------------------------------------------------------

def fill(c):
    """Fills the database at the old version; answers what the checks after
    the update need (partition ids, leases, a KV version, a lock token)."""
    options = {
        "up_orders": {"leaseTime": 3600, "retryLimit": 1, "retryDelay": 0, "namespace": "shop",
                      "task": "orders", "priority": 3, "dedupWindowSeconds": 86400},
        "up_events": {"retentionEnabled": True, "retentionSeconds": 2592000,
                      "completedRetentionSeconds": 2592000, "dlqRetentionSeconds": 604800},
        "up_dedup": {"dedupWindowSeconds": 0},
        "up_empty": {"windowBuffer": 5, "delayedProcessing": 2, "maxWaitTimeSeconds": 86400},
    }
    for queue, o in options.items():
        one(c, "SELECT queen.configure(%s, %s::jsonb)", (queue, json.dumps(o)))
    # Four partitions of two segments of three messages each.
    for p in range(4):
        for half in range(2):
            call(c, "queen.push", [{"queue": "up_orders", "partition": f"p{p}",
                                    "transactionId": f"p{p}-{i}", "payload": {"p": p, "i": i}}
                                   for i in range(half * 3, half * 3 + 3)])
    for i in range(10):
        one(c, "SELECT queen.push(%s::jsonb, 'producer-1')",
            (json.dumps([{"queue": "up_events", "payload": i, "transactionId": f"e-{i}"}]),))
    for _ in range(2):
        call(c, "queen.push", [{"queue": "up_dedup", "payload": "same", "transactionId": "d-1"}])
    ids = {f"p{p}": one(c, "SELECT p.id FROM queen.log_partitions p"
                           " JOIN queen.queues q ON q.id = p.queue_id"
                           " WHERE q.name = 'up_orders' AND p.name = %s", (f"p{p}",))
           for p in range(4)}

    # Group billing: p0-0..p0-2 done, p0-3 and p0-4 leased.
    pop(c, "up_orders", "p0", "billing", 3, '{"autoAck": true}')
    billing = pop(c, "up_orders", "p0", "billing", 2)
    assert txns(billing) == ["p0-3", "p0-4"], billing
    # Queue mode: p1-0 and p1-1 leased.
    queue_mode = pop(c, "up_orders", "p1", None, 2)
    assert txns(queue_mode) == ["p1-0", "p1-1"], queue_mode
    # Group audit: p3-0 and p3-1 dead-lettered at once, p2-0 after its retry.
    r = ack(c, pop(c, "up_orders", "p3", "audit", 2), "dlq", "audit", "bad input")
    assert all(a["success"] for a in r), r
    for _ in range(2):
        r = ack(c, pop(c, "up_orders", "p2", "audit", 1), "failed", "audit", "boom")
        assert all(a["success"] for a in r), r
    # KV with and without an expiry, a quota, a lock and a semaphore, timers
    # for tomorrow.
    call(c, "queen.kv", {"operations": [
        {"op": "put", "ns": "up", "key": "a", "value": {"state": "paid"}, "ttlSeconds": 86400},
        {"op": "put", "ns": "up", "key": "b", "value": [1, 2, 3], "forever": True},
        {"op": "incr", "ns": "up", "key": "n", "delta": 5, "ttlSeconds": 86400},
        {"op": "put", "ns": "up", "key": "k:1", "value": 1, "ttlSeconds": 86400},
        {"op": "put", "ns": "up", "key": "k:2", "value": 2, "forever": True}]})
    c.execute("SELECT queen.kv_quota('up-quota', 10, 100000)")
    c.execute("SELECT queen.kv_set('up-quota', 'only', '\"x\"', 86400)")
    lock = call(c, "queen.locks", {"operations": [
        {"op": "acquire", "name": "nightly", "ttlSeconds": 86400, "owner": "w1"},
        {"op": "acquire", "name": "pool", "ttlSeconds": 86400, "owner": "a", "limit": 2},
        {"op": "acquire", "name": "pool", "ttlSeconds": 86400, "owner": "b", "limit": 2}]})
    assert all(r["acquired"] for r in lock["results"]), lock
    c.execute("SELECT queen.timer_schedule('up_timers', 't-later', '{\"later\": 1}', 86400000,"
              " 'tp', 'tt-1')")
    call(c, "queen.timers", {"operations": [
        {"op": "schedule", "queue": "up_timers", "timerKey": "t-later-2", "delayMs": 90000000,
         "txn": "tt-2", "payload": "eyJsIjoyfQ=="}]})
    # A timer due now, claimed for a day when the update runs (scheduled and
    # claimed in one transaction, so no worker fires it first).
    with c.transaction():
        c.execute("SELECT queen.timer_schedule('up_claimed', 't-claimed', '{\"c\": 1}', 0, 'cp', 'tc-1')")
        claim = json.loads(one(c, "SELECT queen_internal.sweeper_claim_v1(0, 10, 86400000)::text"))
    assert claim["claimed"] == 1, claim
    # An ephemeral queue: three messages in partition e0, the first leased
    # to group g, and a queue-mode pop of the first two.
    one(c, "SELECT queen.ephemeral_configure('up_eph', '{\"maxLength\": 100}'::jsonb)")
    call(c, "queen.ephemeral_push", {"queue": "up_eph", "partition": "e0",
                                     "messages": [{"payload": i} for i in range(3)]})
    eph = one(c, "SELECT queen.ephemeral_pop('up_eph', NULL, 'g', 1, false)")
    assert [m["payload"] for m in eph["messages"]] == [0], eph
    got = one(c, "SELECT queen.ephemeral_pop('up_eph', NULL, NULL, 2, true)")
    assert [m["payload"] for m in got["messages"]] == [0, 1], got
    # The usage the workers would roll up later, now, so nothing moves it.
    c.execute("SELECT queen_internal.kv_usage_rollup_v1()")
    got = call(c, "queen.kv", [{"op": "get", "ns": "up", "key": "a"}])
    return {**ids, "billing": billing, "queue_mode": queue_mode, "lock": lock["results"][0],
            "timer_claim": claim["token"],
            "ephemeral": eph["messages"][0]["id"],
            "version_a": got["results"][0]["version"]}


def after(c, ids):
    """The messages pop and ack, the KV and locks work, the workers run."""
    r = one(c, "SELECT queen.renew_lease(%s, 600)", (ids["billing"]["leaseId"],))
    check(r["success"] and r["renewed"] == 1, "a lease taken before the update renews")
    r = ack(c, ids["queue_mode"], "completed")
    check([a["success"] for a in r] == [True, True],
          "the queue-mode lease taken before the update acks")
    got = pop(c, "up_orders", None, None, 100, '{"partitions": 4, "autoAck": true}')
    want = [f"p0-{i}" for i in range(6)] + [f"p1-{i}" for i in range(2, 6)]
    want += [f"p2-{i}" for i in range(6)] + [f"p3-{i}" for i in range(6)]
    check(sorted(txns(got)) == sorted(want), "queue mode pops every message it had not done, once")
    r = call(c, "queen.ephemeral_ack", {"queue": "up_eph", "group": "g",
                                        "acks": [{"id": ids["ephemeral"]}]})
    check([x["outcome"] for x in r["results"]] == ["acked"],
          "an ephemeral lease taken before the update acks")
    got = one(c, "SELECT queen.ephemeral_pop('up_eph', NULL, 'g', 10, true)")
    check([m["payload"] for m in got["messages"]] == [1, 2],
          "an ephemeral group goes on from its cursor")
    call(c, "queen.ephemeral_push", {"queue": "up_eph", "partition": "e0",
                                     "messages": [{"payload": 3}]})
    got = one(c, "SELECT queen.ephemeral_pop('up_eph', NULL, NULL, 10, true)")
    check([m["payload"] for m in got["messages"]] == [2, 3],
          "ephemeral queue mode goes on from its cursor, past what it had")
    check(one(c, "SELECT queen.ephemeral_depth('up_eph')")["pending"] == 1,
          "the ephemeral tallies went on: the one message group g has not read is held")
    r = ack(c, ids["billing"], "completed", "billing")
    check([a["success"] for a in r] == [True, True],
          "the group's lease taken before the update acks")
    check(txns(pop(c, "up_orders", "p0", "billing", 10, '{"autoAck": true}')) == ["p0-5"],
          "the group goes on from its cursor")
    dead = one(c, """SELECT queen.dlq_messages('{"consumerGroup": "audit"}')""")["messages"]
    check(sorted(d["transactionId"] for d in dead) == ["p2-0", "p3-0", "p3-1"],
          "the dead letters are there")
    r = one(c, "SELECT queen.retry_dlq_message(%s, 'p2-0')", (ids["p2"],))
    check(r["matched"] == 1 and r["retried"][0]["offset"] == 6,
          "a dead letter retries into its partition")
    got = txns(pop(c, "up_orders", "p2", "audit", 10, '{"autoAck": true}'))
    check(got == [f"p2-{i}" for i in range(1, 6)] + ["p2-0"],
          "the group reads on past its dead letter, to the retried message")
    r = call(c, "queen.push", [
        {"queue": "up_orders", "partition": "p0", "transactionId": "p0-0"},
        {"queue": "up_orders", "partition": "p0", "transactionId": "p0-6"}])
    check([(x["status"], x["offset"]) for x in r] == [("duplicate", 0), ("queued", 6)],
          "a push deduplicates against what was pushed before the update and appends after it")
    r = one(c, "SELECT queen.kv_cas('up', 'a', %s, '{\"state\": \"shipped\"}', 86400)",
            (ids["version_a"],))
    check(r["applied"], "a KV compare-and-set at the version read before the update applies")
    check(one(c, "SELECT queen.kv_incr('up', 'n', 1, 60)")["value"] == 6, "a KV counter goes on")
    r = call(c, "queen.locks", {"operations": [
        {"op": "acquire", "name": "nightly", "ttlSeconds": 60, "owner": "w2"}]})["results"][0]
    check(not r["acquired"] and r["reason"] == "held",
          "a lock taken before the update is still held")
    r = call(c, "queen.locks", {"operations": [
        {"op": "release", "name": "nightly", "token": ids["lock"]["token"]}]})["results"][0]
    check(r["released"], "its holder releases it with the token from before the update")

    # A group registered before the update does not conflate; a streaming
    # query runs a cycle over a batch of a queue from before the update.
    r = pop(c, "up_orders", "p3", "audit", 10, '{"conflation": true}')
    check(r.get("conflationConflict") is True and "conflation" not in r,
          "a group from before the update does not conflate when a pop asks for it")
    reg = call(c, "queen.stream_register", {"name": "up_stream", "source_queue": "up_events",
                                             "config_hash": "h"})
    batch = pop(c, "up_events", None, "streams", 100, '{}')
    last = batch["messages"][-1]
    r = call(c, "queen.stream_cycle", {
        "query_id": reg["query_id"], "partition_id": last["partitionId"], "consumer_group": "streams",
        "state_ops": [{"type": "upsert", "key": "n", "value": len(batch["messages"])}],
        "ack": {"transactionId": last["transactionId"], "leaseId": batch["leaseId"]}})
    check(r["success"] and r["ack_result"]["count"] == len(batch["messages"]) > 0,
          "a streaming query acks a batch of a queue from before the update with its state")

    # The workers: a timer due now fires into its queue; the maintenance
    # lease rows advance.
    token = maintenance_token(c)
    c.execute("SELECT queen.timer_schedule('up_timers', 't-now', '{\"now\": 1}', 0, 'now',"
              " 'tt-now')")
    fired = cluster.wait_for(
        lambda: pop(c, "up_timers", "now", None, 10, '{"autoAck": true}')["messages"],
        "the timer due now fires", timeout=60)
    check([m["transactionId"] for m in fired] == ["tt-now"],
          "the sweeper fires a timer due now into its queue")
    check(one(c, "SELECT count(*) FROM queen.log_timers t WHERE queue = 'up_timers' AND NOT EXISTS"
                 " (SELECT 1 FROM queen.log_timers_done d WHERE d.message_id = t.message_id)") == 2,
          "the timers for tomorrow are still waiting")
    held = one(c, "SELECT json_build_object('attempt', c.attempt, 'token', c.token, 'held', c.claimed_until > now())"
                  " FROM queen.log_timer_claims c JOIN queen.log_timers t ON t.message_id = c.message_id"
                  " WHERE t.queue = 'up_claimed'")
    check(held == {"attempt": 1, "token": ids["timer_claim"], "held": True},
          "a timer claimed before the update keeps its claim: its token, its deadline, one attempt")
    check(one(c, "SELECT count(*) FROM queen.log_timers t JOIN queen.log_timers_done d"
                 " ON d.message_id = t.message_id WHERE t.queue = 'up_claimed'") == 0,
          "the claimed timer has not fired: it waits for its claim to expire")
    cluster.wait_for(lambda: maintenance_token(c) > token, "the maintenance lease advances",
                     timeout=60)
    check(True, f"the retention task's maintenance lease advanced past token {token}")


def version(c):
    return one(c, "SELECT extversion FROM pg_extension WHERE extname = 'queen'")


def main(db):
    say(f"database {db} at {OLD}, database {FRESH_DB} as a fresh install")
    recreate(db)
    recreate(FRESH_DB)
    with connect(db) as c:
        c.execute(f"CREATE EXTENSION queen VERSION '{OLD}'")
        check(version(c) == OLD, f"CREATE EXTENSION queen VERSION '{OLD}'")
    with connect(FRESH_DB) as c:
        c.execute("CREATE EXTENSION queen")
        new = version(c)
        check(new != OLD, f"a fresh CREATE EXTENSION queen is at {new}")
        found = symbols.problems(c, SCRIPTS, "$libdir/queen")
        for f in found:
            say(f)
        check(not found, "every symbol an earlier script declared is in the library,"
              " with the arguments the current version gives it")
    # The workers start on the database under test, still at the old version.
    cluster.restart()
    with connect(db) as c:
        cluster.wait_for(lambda: maintenance_token(c) > 0, "the maintenance lease is claimed",
                         timeout=60)
        check(True, f"the {new} library's workers run on the {OLD} schema")
        # The sweeper's first usage rollup runs at its start: before the
        # data, so that no rollup moves a row between the two readings.
        cluster.wait_for(lambda: one(c, "SELECT queen.sweeper_metrics()")["kvRollupsTotal"] >= 1,
                         "the sweeper's first rollup", timeout=60)
        ids = fill(c)
        # Privileges changed by hand since the install: the update puts them
        # back as a fresh install has them (compared below).
        c.execute("GRANT EXECUTE ON FUNCTION queen.configure(text, jsonb, text) TO PUBLIC")
        c.execute("ALTER FUNCTION queen.kv_get(text, text) SECURITY INVOKER")
        c.execute("ALTER FUNCTION queen_internal.sweeper_run_once() RESET search_path")
        before = snapshot(c, ids)
        say(f"recorded {len(before['readers'])} reader answers"
            f" and the rows of {len(TABLES)} tables")
        notices = []
        c.add_notice_handler(lambda d: notices.append(d.message_primary))
        c.execute("ALTER EXTENSION queen UPDATE")
        for n in notices:
            say(f"notice from the update: {n}")
        got = version(c)
        check(got == new, f"ALTER EXTENSION queen UPDATE: {OLD} -> {got}")
        diff = diff_sections(before, snapshot(c, ids), "before", "after")
        if diff:
            print(diff)
        check(not diff, "every reader answers and every row reads as before the update")
    diff, sections = compare(db, FRESH_DB)
    if diff:
        print(diff)
    check(not diff, "the updated schema equals a fresh install: "
          + ", ".join(f"{len(v)} {k}" for k, v in sections.items()))
    with connect(db) as c:
        after(c, ids)
    say("passed")


if __name__ == "__main__":
    try:
        if len(sys.argv) == 4 and sys.argv[1] == "compare":
            d, _ = compare(sys.argv[2], sys.argv[3])
            print(d or "no difference")
            sys.exit(1 if d else 0)
        if len(sys.argv) != 2:
            sys.exit(__doc__)
        main(sys.argv[1])
    except Failed as e:
        say(f"FAILED: {e}")
        sys.exit(1)
