"""Failover to a standby. A primary of its own (with queen, the
workers on, `synchronous_commit = on`, `queen.ack_async_commit = off`) and
a streaming standby made by `pg_basebackup`, named in
`synchronous_standby_names`; a front-end given both hosts with
`target_session_attrs=read-write`. While producers push and a consumer
pops and acks through the front-end, the primary is killed (SIGKILL to the
postmaster and every backend) and the standby promoted. Then: every push
answered 201 is on the promoted server exactly once, no message whose ack
was answered is delivered again, the front-end serves from the promoted
server without a restart, and the background workers run there (the
maintenance lease advances, a timer due now fires)."""

import os
import shutil
import signal
import subprocess
import threading
import time

import psycopg
import pytest
import requests

import cluster

BASE = os.path.join(cluster.DIR, "failover")
PRIMARY = os.path.join(BASE, "primary")
STANDBY = os.path.join(BASE, "standby")
P_PORT, S_PORT = 6548, 6549
FRONT_PORT = 6648
LOAD_S = 4.0


def pg(*args, check=True):
    r = cluster.as_pg([os.path.join(cluster.PG_BIN, args[0]), *args[1:]])
    if check and r.returncode != 0:
        raise AssertionError(f"{args[0]}: {r.stdout}{r.stderr}")
    return r


def mkdir_pg(path):
    os.makedirs(path, exist_ok=True)
    if os.geteuid() == 0 and cluster.PG_USER != "root":
        shutil.chown(path, cluster.PG_USER)
    os.chmod(path, 0o700)


def dsn(port, db="queen"):
    return f"host=127.0.0.1 port={port} user=postgres dbname={db}"


def q(port, sql, params=None):
    with psycopg.connect(dsn(port), autocommit=True) as c:
        return c.execute(sql, params).fetchone()[0]


def append_conf(data, lines):
    path = os.path.join(data, "postgresql.conf")
    with open(path, "a") as f:
        f.write("\n".join(lines) + "\n")


def pids_of(data):
    with open(os.path.join(data, "postmaster.pid")) as f:
        pm = int(f.readline())
    kids = subprocess.run(["pgrep", "-P", str(pm)], capture_output=True, text=True).stdout.split()
    return [pm] + [int(k) for k in kids]


def setup(synchronous):
    shutil.rmtree(BASE, ignore_errors=True)
    for d in (BASE, PRIMARY, os.path.join(PRIMARY, "data"), STANDBY):
        mkdir_pg(d)
    data = os.path.join(PRIMARY, "data")
    pg("initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C.UTF-8")
    append_conf(data, [
        "listen_addresses = '127.0.0.1'", f"port = {P_PORT}", f"unix_socket_directories = '{PRIMARY}'",
        "shared_preload_libraries = 'queen'", "queen.database_name = 'queen'",
        "queen.retention_interval_ms = 1000", "queen.ack_async_commit = off",
        "synchronous_commit = on", "wal_level = replica", "max_wal_senders = 4",
        "logging_collector = off"])
    pg("pg_ctl", "-D", data, "-l", os.path.join(PRIMARY, "postgres.log"), "-w", "-t", "60", "start")
    with psycopg.connect(dsn(P_PORT, "postgres"), autocommit=True) as c:
        c.execute("CREATE DATABASE queen")
    with psycopg.connect(dsn(P_PORT), autocommit=True) as c:
        c.execute("CREATE EXTENSION queen")
    sdata = os.path.join(STANDBY, "data")
    pg("pg_basebackup", "-d", f"host=127.0.0.1 port={P_PORT} user=postgres application_name=standby1",
       "-D", sdata, "-R", "-X", "stream", "-c", "fast")
    append_conf(sdata, [f"port = {S_PORT}", f"unix_socket_directories = '{STANDBY}'"])
    pg("pg_ctl", "-D", sdata, "-l", os.path.join(STANDBY, "postgres.log"), "-w", "-t", "60", "start")
    # Synchronous once the standby streams (named before, every commit
    # would wait for a standby that is not there yet).
    cluster.wait_for(lambda: q(P_PORT, "SELECT count(*) FROM pg_stat_replication"
                                       " WHERE application_name = 'standby1' AND state = 'streaming'") == 1,
                     "the standby streams", timeout=60)
    if not synchronous:
        return
    with psycopg.connect(dsn(P_PORT), autocommit=True) as c:
        c.execute("ALTER SYSTEM SET synchronous_standby_names = 'standby1'")
        c.execute("SELECT pg_reload_conf()")
    cluster.wait_for(lambda: q(P_PORT, "SELECT count(*) FROM pg_stat_replication"
                                       " WHERE application_name = 'standby1' AND sync_state = 'sync'") == 1,
                     "the standby replicates synchronously", timeout=60)


def teardown():
    for d in (PRIMARY, STANDBY):
        data = os.path.join(d, "data")
        if os.path.exists(os.path.join(data, "postmaster.pid")):
            pg("pg_ctl", "-D", data, "-m", "immediate", "-w", "stop", check=False)


@pytest.mark.parametrize("synchronous", [True, False], ids=["synchronous", "asynchronous"])
def test_a_failover_loses_no_answered_push_and_undoes_no_answered_ack_when_synchronous(synchronous):
    """Synchronous: nothing answered is lost or undone. Asynchronous: what
    the standby had not received is lost (counted and printed, for
    docs/durability.md), and nothing is stored twice."""
    setup(synchronous)
    front = None
    try:
        front = cluster.Front(FRONT_PORT, (
            f"host=127.0.0.1,127.0.0.1 port={P_PORT},{S_PORT} user=postgres dbname=queen"
            " target_session_attrs=read-write connect_timeout=2"), QUEEN_REQUEST_TIMEOUT_MS=3000)
        queue = cluster.unique("fo")
        pushed, acked, stop = [], [], threading.Event()

        def producer(k):
            s, n = requests.Session(), 0
            while not stop.is_set():
                txn = f"p{k}-{n}"
                n += 1
                try:
                    r = s.post(front.url + "/api/v1/push", timeout=10,
                               json={"items": [{"queue": queue, "partition": f"p{k}", "transactionId": txn,
                                                "payload": {"txn": txn}}]})
                    if r.status_code == 201:
                        pushed.append(txn)
                except requests.RequestException:
                    pass
                time.sleep(0.01)

        def consumer():
            s = requests.Session()
            while not stop.is_set():
                try:
                    r = s.get(front.url + f"/api/v1/pop/queue/{queue}", timeout=10,
                              params={"batch": 10, "wait": "false", "consumerGroup": "g"})
                    if r.status_code != 200:
                        time.sleep(0.05)
                        continue
                    msgs = r.json().get("messages", [])
                    if not msgs:
                        time.sleep(0.02)
                        continue
                    body = {"acknowledgments": [
                        {"transactionId": m["transactionId"], "partitionId": m["partitionId"],
                         "leaseId": m["leaseId"], "status": "completed"} for m in msgs], "consumerGroup": "g"}
                    a = s.post(front.url + "/api/v1/ack/batch", json=body, timeout=10)
                    if a.status_code == 200:
                        acked.extend(m["transactionId"] for m, x in zip(msgs, a.json()) if x.get("success"))
                except requests.RequestException:
                    time.sleep(0.05)

        threads = [threading.Thread(target=producer, args=(k,)) for k in range(3)]
        threads.append(threading.Thread(target=consumer))
        for t in threads:
            t.start()
        time.sleep(LOAD_S)
        before = (len(pushed), len(acked))
        assert before[0] > 0 and before[1] > 0, before
        for pid in pids_of(os.path.join(PRIMARY, "data")):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        pg("pg_ctl", "-D", os.path.join(STANDBY, "data"), "-w", "-t", "60", "promote")
        # The front-end finds the promoted server by itself.
        cluster.wait_for(lambda: len(pushed) > before[0] + 20, "pushes answered after the promotion",
                         timeout=60)
        time.sleep(1.0)
        stop.set()
        for t in threads:
            t.join(timeout=30)

        # Every answered push is there once: read back in a group of its own.
        seen = []
        with psycopg.connect(dsn(S_PORT), autocommit=True) as c:
            while True:
                got = c.execute("SELECT queen.pop(%s, NULL, 'audit', 1000,"
                                " '{\"autoAck\": true, \"subscriptionMode\": \"all\"}')", (queue,)).fetchone()[0]
                if not got["messages"]:
                    break
                seen.extend(m["transactionId"] for m in got["messages"])
            assert len(seen) == len(set(seen)), "a message stored twice"
            missing = set(pushed) - set(seen)
            if synchronous:
                assert not missing, f"{len(missing)} answered pushes lost, e.g. {sorted(missing)[:5]}"
            # No message whose ack was answered comes to its group again.
            again = []
            while True:
                got = c.execute("SELECT queen.pop(%s, NULL, 'g', 1000, '{\"autoAck\": true}')",
                                (queue,)).fetchone()[0]
                if not got["messages"]:
                    break
                again.extend(m["transactionId"] for m in got["messages"])
            undone = set(again) & set(acked)
            if synchronous:
                assert not undone, f"{len(undone)} answered acks undone, e.g. {sorted(undone)[:5]}"
            # The workers run on the promoted server.
            token = c.execute("SELECT COALESCE(max(fencing_token), 0) FROM queen.maintenance_leases"
                              " WHERE task = 'retention'").fetchone()[0]
            c.execute("SELECT queen.timer_schedule(%s, 't-now', '{\"now\": 1}', 0, 'now', 'fo-timer')",
                      (queue + "-timers",))
        cluster.wait_for(lambda: q(S_PORT, "SELECT COALESCE(max(fencing_token), 0) FROM queen.maintenance_leases"
                                           " WHERE task = 'retention'") > token,
                         "the maintenance lease advances on the promoted server", timeout=60)
        cluster.wait_for(lambda: q(S_PORT, "SELECT queen.pop(%s, 'now', NULL, 10, '{\"autoAck\": true}')",
                                   (queue + "-timers",))["messages"],
                         "a timer due now fires on the promoted server", timeout=60)
        print(f"failover ({'synchronous' if synchronous else 'asynchronous'}): {len(pushed)} pushes"
              f" answered ({before[0]} before the kill), {len(missing)} of them lost;"
              f" {len(acked)} acks answered, {len(undone)} undone")
    finally:
        if front is not None:
            front.stop()
        teardown()
