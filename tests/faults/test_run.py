"""`make run`'s cluster asks for a password over TCP: scripts/run.sh, in a
directory and on ports of its own, starts PostgreSQL and the front-end; a
connection over TCP without a password is refused (scram-sha-256), the
front-end's role logs in with the password run.sh made for it, the
front-end answers, and Ctrl-C stops both."""

import os
import signal
import subprocess
import time

import psycopg
import pytest
import requests

import cluster

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
RUN_DIR = os.path.join(cluster.DIR, "run")
PG_PORT = 6542
FRONT_PORT = 6644


def test_make_runs_cluster_wants_a_password_over_tcp():
    env = dict(os.environ, QUEEN_RUN_DIR=RUN_DIR, QUEEN_PG_PORT=str(PG_PORT), QUEEN_PORT=str(FRONT_PORT))
    log = open(os.path.join(cluster.DIR, "run.log"), "w")
    run = subprocess.Popen([os.path.join(ROOT, "scripts", "run.sh")], env=env, stdout=log,
                           stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        health = None
        while time.monotonic() < deadline and run.poll() is None:
            try:
                health = requests.get(f"http://127.0.0.1:{FRONT_PORT}/health", timeout=2).json()
                break
            except requests.RequestException:
                time.sleep(0.5)
        assert health is not None, f"make run did not come up: {open(log.name).read()[-2000:]}"
        assert health["database"] == "connected", health

        for user in ("postgres", "queen_front"):
            with pytest.raises(psycopg.OperationalError) as refused:
                psycopg.connect(f"host=127.0.0.1 port={PG_PORT} user={user} dbname=queen", connect_timeout=5)
            assert "password" in str(refused.value), refused.value
        secret = open(os.path.join(ROOT, ".queen-front.password")).read().strip()
        with psycopg.connect(f"host=127.0.0.1 port={PG_PORT} user=queen_front password={secret} dbname=queen",
                             connect_timeout=5) as c:
            assert c.execute("SELECT current_user").fetchone()[0] == "queen_front"
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(f"host=127.0.0.1 port={PG_PORT} user=queen_front password=wrong dbname=queen",
                            connect_timeout=5)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGINT)
            try:
                run.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(run.pid, signal.SIGKILL)
        log.close()
    assert run.returncode == 0, open(log.name).read()[-2000:]
