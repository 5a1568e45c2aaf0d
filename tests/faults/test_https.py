"""HTTPS in front of the front-end, as docs/operations.md shows it: the
guide's nginx server block, read from the guide itself (only its port, its
certificate's paths and the front-end's port put in), terminates TLS for a
front-end on the loopback. A client that trusts the test's CA reaches
/health, pushes and pops over HTTPS, a long poll waits through it, and a
client that does not trust the CA is refused."""

import os
import re
import shutil
import subprocess
import time

import pytest
import requests

import cluster

FRONT_PORT = 6649
HTTPS_PORT = 6650
GUIDE = os.path.join(os.path.dirname(__file__), "..", "..", "docs", "operations.md")


def guide_server_block():
    with open(GUIDE) as f:
        text = f.read()
    blocks = re.findall(r"```nginx\n(.*?)```", text, re.S)
    assert len(blocks) == 1, "docs/operations.md shows one nginx server block"
    return blocks[0]


@pytest.fixture(scope="module")
def https():
    d = os.path.join(cluster.DIR, "https")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    cluster.make_certs(d)
    block = guide_server_block()
    for old, new in (("listen 443 ssl;", f"listen 127.0.0.1:{HTTPS_PORT} ssl;"),
                     ("/etc/ssl/queen.pem", f"{d}/server.crt"),
                     ("/etc/ssl/queen.key", f"{d}/server.key"),
                     ("http://127.0.0.1:6632", f"http://127.0.0.1:{FRONT_PORT}")):
        assert old in block, f"the guide's nginx block has {old!r}"
        block = block.replace(old, new)
    with open(os.path.join(d, "nginx.conf"), "w") as f:
        f.write(f"pid {d}/nginx.pid;\nerror_log {d}/error.log;\nevents {{}}\nhttp {{\n"
                f"  access_log off;\n  client_body_temp_path {d}/body;\n  proxy_temp_path {d}/proxy;\n"
                f"{block}}}\n")
    front = cluster.Front(FRONT_PORT)
    nginx = subprocess.Popen(["nginx", "-p", d, "-c", f"{d}/nginx.conf", "-g", "daemon off;"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    try:
        cluster.wait_for(lambda: _up(d), "nginx answers over HTTPS", timeout=30)
        yield d
    finally:
        nginx.terminate()
        nginx.wait(10)
        front.stop()


def _up(d):
    try:
        return requests.get(f"https://localhost:{HTTPS_PORT}/health", verify=f"{d}/ca.crt", timeout=2).ok
    except requests.RequestException:
        return False


def test_the_guides_nginx_block_serves_the_front_end_over_https(https):
    base = f"https://localhost:{HTTPS_PORT}"
    ca = f"{https}/ca.crt"
    health = requests.get(base + "/health", verify=ca, timeout=10).json()
    assert health["database"] == "connected", health
    queue = cluster.unique("https")
    r = requests.post(base + "/api/v1/push", verify=ca, timeout=10,
                      json={"items": [{"queue": queue, "payload": {"over": "https"}}]})
    assert r.status_code == 201, r.text
    r = requests.get(base + f"/api/v1/pop/queue/{queue}", verify=ca, timeout=10,
                     params={"batch": 1, "wait": "false", "autoAck": "true"})
    assert r.status_code == 200 and r.json()["messages"][0]["data"] == {"over": "https"}, r.text
    # A long poll waits through the proxy and is answered when it ends.
    t0 = time.monotonic()
    r = requests.get(base + f"/api/v1/pop/queue/{queue}", verify=ca, timeout=30,
                     params={"batch": 1, "wait": "true", "timeout": 2000})
    assert r.status_code in (200, 204) and time.monotonic() - t0 >= 1.5, (r.status_code, r.text)
    # A client that does not trust the test's CA gets no answer.
    with pytest.raises(requests.exceptions.SSLError):
        requests.get(base + "/health", verify=f"{https}/other-ca.crt", timeout=10)
