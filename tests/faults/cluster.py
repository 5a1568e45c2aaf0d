"""The cluster the fault suite runs against, and what the tests do to it:
kill the postmaster or a backend, restart, start front-ends, read the log.

scripts/faults.sh starts the cluster and sets the QUEEN_FAULTS_* variables.
"""

import json
import os
import signal
import subprocess
import time
import uuid

import psycopg
import requests

DIR = os.environ.get("QUEEN_FAULTS_DIR", os.path.join(os.path.dirname(__file__), "..", "..", ".queen-faults"))
PORT = int(os.environ.get("QUEEN_FAULTS_PORT", "6536"))
DSN = os.environ.get("QUEEN_FAULTS_DSN", f"host=127.0.0.1 port={PORT} user=postgres dbname=queen")
HTTP = os.environ.get("QUEEN_FAULTS_HTTP", "http://127.0.0.1:6640")
FRONT = os.environ.get("QUEEN_FAULTS_FRONT", os.path.join(os.path.dirname(__file__), "..", "..", "target", "release", "queen_front"))
PG_BIN = os.environ.get("QUEEN_FAULTS_PG_BIN", "/usr/lib/postgresql/15/bin")
PG_USER = os.environ.get("QUEEN_FAULTS_PG_USER", "postgres")
DATA = os.path.join(DIR, "data")
LOG = os.path.join(DIR, "postgres.log")

# The schema of the internal step functions (retention steps and cycle, the
# sweeper's one-shot, the watermark walk): one place to change it.
INTERNAL = os.environ.get("QUEEN_INTERNAL_SCHEMA", "queen_internal")


def unique(prefix):
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def connect(autocommit=True, **kw):
    return psycopg.connect(DSN, autocommit=autocommit, **kw)


def q1(sql, params=None, conn=None):
    """One value of one row, on a connection of its own unless given one."""
    if conn is not None:
        return conn.execute(sql, params).fetchone()[0]
    with connect() as c:
        return c.execute(sql, params).fetchone()[0]


def as_pg(args, **kw):
    if os.geteuid() == 0 and PG_USER != "root":
        args = ["runuser", "-u", PG_USER, "--"] + list(args)
    return subprocess.run(args, capture_output=True, text=True, **kw)


def postmaster_pid():
    with open(os.path.join(DATA, "postmaster.pid")) as f:
        return int(f.readline().strip())


def _alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _group(pgid):
    out = subprocess.run(["ps", "-o", "pid=", "-g", str(pgid)], capture_output=True, text=True).stdout
    return [int(p) for p in out.split()]


def ready(timeout=60.0):
    """Waits until the server takes connections and the extension answers."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        try:
            with connect(connect_timeout=2) as c:
                c.execute("SELECT 1 FROM pg_extension WHERE extname = 'queen'").fetchone()
                return
        except psycopg.Error as e:
            last = e
            time.sleep(0.1)
    raise AssertionError(f"the server did not take connections within {timeout} s: {last}")


def start(timeout=60.0):
    r = as_pg([f"{PG_BIN}/pg_ctl", "-D", DATA, "-l", LOG, "-w", "-t", str(int(timeout)), "start"])
    if r.returncode != 0 and "another server might be running" not in r.stderr:
        raise AssertionError(f"pg_ctl start failed: {r.stdout}{r.stderr}")
    ready(timeout)


def restart(timeout=60.0):
    """A clean restart (pg_ctl restart -m fast)."""
    r = as_pg([f"{PG_BIN}/pg_ctl", "-D", DATA, "-l", LOG, "-m", "fast", "-w", "-t", str(int(timeout)), "restart"])
    if r.returncode != 0:
        raise AssertionError(f"pg_ctl restart failed: {r.stdout}{r.stderr}")
    ready(timeout)


def kill(restart=True):
    """kill -9 of the postmaster, then (by default) a restart. Answers the
    instant of the kill (time.monotonic())."""
    pid = postmaster_pid()
    pgid = os.getpgid(pid)
    at = time.monotonic()
    os.kill(pid, signal.SIGKILL)
    # The orphaned children notice the postmaster's death and exit; a new
    # postmaster cannot start while they still hold the shared memory.
    deadline = time.monotonic() + 30
    while _alive(pid) or (pgid == pid and _group(pgid)):
        if time.monotonic() > deadline:
            for p in _group(pgid) if pgid == pid else []:
                os.kill(p, signal.SIGKILL)
        if time.monotonic() > deadline + 10:
            raise AssertionError("the killed postmaster's children did not exit")
        time.sleep(0.05)
    if restart:
        start()
    return at


def kill_backend(backend_pid):
    os.kill(backend_pid, signal.SIGKILL)


def log_offset():
    try:
        return os.path.getsize(LOG)
    except FileNotFoundError:
        return 0


def log_since(offset):
    with open(LOG, errors="replace") as f:
        f.seek(offset)
        return f.read()


class Front:
    """A front-end process of the test's own: queen_front on `port` with the
    given database URL and environment."""

    def __init__(self, port, database_url=None, **env):
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        e = dict(os.environ)
        e.update({"DATABASE_URL": database_url or f"{DSN} application_name=queen_front_{port}",
                  "PORT": str(port), "RUST_LOG": "warn"})
        e.update({k: str(v) for k, v in env.items()})
        self.log_path = os.path.join(DIR, f"front-{port}.log")
        self.log = open(self.log_path, "ab")
        self.proc = subprocess.Popen([FRONT], env=e, stdout=self.log, stderr=subprocess.STDOUT)
        os.makedirs(os.path.join(DIR, "fronts"), exist_ok=True)
        self.pidfile = os.path.join(DIR, "fronts", f"{port}.pid")
        with open(self.pidfile, "w") as f:
            f.write(str(self.proc.pid))
        deadline = time.monotonic() + 20
        while True:
            try:
                requests.get(self.url + "/health", timeout=1)
                break
            except requests.RequestException:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError(f"front-end on {port} did not start (see {self.log_path})")
                time.sleep(0.1)

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        self.log.close()
        try:
            os.unlink(self.pidfile)
        except FileNotFoundError:
            pass


def http_post(base, path, body, timeout=30, raw=None, headers=None):
    h = {"content-type": "application/json"}
    h.update(headers or {})
    data = raw if raw is not None else json.dumps(body)
    return requests.post(base + path, data=data, headers=h, timeout=timeout)


def wait_for(cond, what, timeout=60.0, every=0.1):
    """Polls `cond` until it answers a true value; that value, or an
    AssertionError naming `what` and the last value seen."""
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = cond()
        if last:
            return last
        time.sleep(every)
    raise AssertionError(f"{what}: not within {timeout} s (last seen: {last!r})")


def _openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


def make_certs(d):
    """A CA, the server's certificate for DNS name localhost signed by it,
    and a second CA that signed nothing of the server's."""
    for ca in ("ca", "other-ca"):
        _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN=queen test {ca}",
                 "-keyout", f"{ca}.key", "-out", f"{ca}.crt", cwd=d)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost",
             "-keyout", "server.key", "-out", "server.csr", cwd=d)
    with open(os.path.join(d, "san.ext"), "w") as f:
        f.write("subjectAltName = DNS:localhost\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
             "-days", "2", "-extfile", "san.ext", "-out", "server.crt", cwd=d)
