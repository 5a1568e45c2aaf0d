"""TLS to PostgreSQL: the front-end connects with TLS when its connection
string asks (`sslmode`), and checks the server's certificate as libpq does:
`verify-full` against the CA of `sslrootcert` and the host name,
`verify-ca` against the CA alone, `require` not at all; a certificate that
fails the check is never used (the front-end says its database is away and
answers 503). For the test the fault suite's cluster serves TLS with a
certificate the test makes (for `localhost` only), then goes back to how it
was. The sharding proxy reaches its shards with TLS as a shard's
connection string asks, and never reaches one whose certificate fails the
check."""

import os
import shutil

import psycopg
import pytest
import requests

import cluster

PORT = 6647


def set_tls(on, d=None):
    with cluster.connect() as c:
        if on:
            c.execute(f"ALTER SYSTEM SET ssl_cert_file = '{d}/server.crt'")
            c.execute(f"ALTER SYSTEM SET ssl_key_file = '{d}/server.key'")
            c.execute("ALTER SYSTEM SET ssl = on")
        else:
            c.execute("ALTER SYSTEM RESET ssl")
            c.execute("ALTER SYSTEM RESET ssl_cert_file")
            c.execute("ALTER SYSTEM RESET ssl_key_file")
        c.execute("SELECT pg_reload_conf()")


@pytest.fixture(scope="module")
def certs():
    d = os.path.join(cluster.DIR, "tls")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    cluster.make_certs(d)
    if os.geteuid() == 0 and cluster.PG_USER != "root":
        shutil.chown(d, cluster.PG_USER)
        for f in os.listdir(d):
            shutil.chown(os.path.join(d, f), cluster.PG_USER)
    os.chmod(os.path.join(d, "server.key"), 0o600)
    set_tls(True, d)
    cluster.wait_for(lambda: cluster.q1("SHOW ssl") == "on", "ssl on after the reload", timeout=30)
    yield d
    set_tls(False)


def dsn(host, mode, app, root=None):
    s = f"host={host} port={cluster.PORT} user=postgres dbname=queen application_name={app} sslmode={mode}"
    return s + (f" sslrootcert={root}" if root else "")


def served(front, app):
    """A push and a pop through `front`; whether its connections use TLS."""
    queue = cluster.unique("tls")
    r = cluster.http_post(front.url, "/api/v1/push", {"items": [{"queue": queue, "payload": {"n": 1}}]})
    assert r.status_code == 201, r.text
    r = requests.get(front.url + f"/api/v1/pop/queue/{queue}", params={"batch": 1, "wait": "false"}, timeout=30)
    assert r.status_code == 200 and len(r.json()["messages"]) == 1, r.text
    return cluster.q1("SELECT bool_and(s.ssl) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)"
                      " WHERE a.application_name = %s", (app,))


def refused(front):
    health = requests.get(front.url + "/health", timeout=30).json()
    assert health["database"] != "connected", health
    r = cluster.http_post(front.url, "/api/v1/push", {"items": [{"queue": "tls-refused", "payload": 1}]})
    assert r.status_code == 503, r.text


@pytest.mark.parametrize("host,mode,root,app", [
    ("localhost", "verify-full", "ca", "tls_verify_full"),
    ("127.0.0.1", "verify-ca", "ca", "tls_verify_ca"),
    ("127.0.0.1", "require", None, "tls_require"),
    ("127.0.0.1", "prefer", None, "tls_prefer"),
])
def test_the_front_end_connects_with_tls_as_sslmode_asks(certs, host, mode, root, app):
    front = cluster.Front(PORT, dsn(host, mode, app, root and f"{certs}/{root}.crt"))
    try:
        assert served(front, app) is True, f"{mode}: the front-end's connections use TLS"
    finally:
        front.stop()


def test_sslmode_disable_connects_in_the_clear(certs):
    front = cluster.Front(PORT, dsn("127.0.0.1", "disable", "tls_disable"))
    try:
        assert served(front, "tls_disable") is False
    finally:
        front.stop()


@pytest.mark.parametrize("host,mode,root", [
    ("127.0.0.1", "verify-full", "ca"),        # the certificate names localhost only
    ("localhost", "verify-full", "other-ca"),  # signed by another CA
    ("127.0.0.1", "verify-ca", "other-ca"),
])
def test_a_certificate_that_fails_the_check_is_never_used(certs, host, mode, root):
    front = cluster.Front(PORT, dsn(host, mode, "tls_refused", f"{certs}/{root}.crt"))
    try:
        refused(front)
        assert cluster.q1("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'tls_refused'") == 0
    finally:
        front.stop()


def proxy_to(certs, name, root):
    """A shard database and a proxy database in the fault suite's cluster,
    the proxy reaching its shard at `localhost` with `verify-full` against
    `root`, under application_name `name`."""
    with cluster.connect() as c:
        for db in (f"{name}_proxy", f"{name}_shard"):
            c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (db,))
            c.execute(f"DROP DATABASE IF EXISTS {db}")
            c.execute(f"CREATE DATABASE {db}")
    with cluster.connect(dbname=f"{name}_shard") as s:
        s.execute("CREATE EXTENSION queen")
        s.execute("SELECT queen.shard_set(0)")
    p = cluster.connect(dbname=f"{name}_proxy")
    p.execute("SET client_min_messages = warning")
    p.execute("CREATE EXTENSION plproxy")
    p.execute("CREATE EXTENSION queen_proxy")
    p.execute("SELECT queen.shard_add(%s)",
              (f"host=localhost port={cluster.PORT} dbname={name}_shard sslmode=verify-full "
               f"sslrootcert={certs}/{root}.crt application_name={name}",))
    p.execute("CREATE USER MAPPING FOR PUBLIC SERVER queen")
    return p


def drop(name):
    with cluster.connect() as c:
        for db in (f"{name}_proxy", f"{name}_shard"):
            c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", (db,))
            c.execute(f"DROP DATABASE IF EXISTS {db} WITH (FORCE)")


def test_the_proxy_reaches_its_shards_with_tls_as_their_dsn_asks(certs):
    """A shard's connection string is libpq's: with `sslmode=verify-full` the
    proxy's calls reach the shard over TLS, checked against the CA; a shard
    whose certificate another CA signed is never reached, and the call fails
    naming a connection error, with nothing stored."""
    p = proxy_to(certs, "tls_link", "ca")
    try:
        pushed = p.execute("SELECT queen.push('[{\"queue\": \"tlsq\", \"payload\": 1}]'::jsonb)").fetchone()[0]
        assert pushed[0]["status"] == "queued", pushed
        popped = p.execute("SELECT queen.pop('tlsq', NULL, NULL, 1, '{\"autoAck\": true}')").fetchone()[0]
        assert [m["data"] for m in popped["messages"]] == [1], popped
        links = cluster.q1("SELECT array_agg(s.ssl) FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid)"
                           " WHERE a.application_name = 'tls_link'")
        assert links and all(links), f"the proxy's connections to its shard use TLS: {links}"
    finally:
        p.close()
        drop("tls_link")

    p = proxy_to(certs, "tls_wrong", "other-ca")
    try:
        with pytest.raises(psycopg.Error) as e:
            p.execute("SELECT queen.push('[{\"queue\": \"tlsq\", \"payload\": 2}]'::jsonb)")
        assert "certificate" in str(e.value) or e.value.sqlstate.startswith("08"), str(e.value)
        assert cluster.q1("SELECT count(*) FROM pg_stat_activity WHERE application_name = 'tls_wrong'") == 0
        with cluster.connect(dbname="tls_wrong_shard") as s:
            assert s.execute("SELECT count(*) FROM queen.queues").fetchone()[0] == 0
    finally:
        p.close()
        drop("tls_wrong")
