"""The races of tests/isolation/specs, run by PostgreSQL's own
pg_isolation_regress against the suite's cluster, in a database of their
own (no background worker runs there, so every step is the spec's)."""

import os
import shutil
import subprocess

import cluster
from cluster import INTERNAL

ISOLATION = os.path.join(os.path.dirname(__file__), "..", "isolation")
REGRESS = os.environ.get("QUEEN_PG_ISOLATION_REGRESS",
                         "/usr/lib/postgresql/15/lib/pgxs/src/test/isolation/pg_isolation_regress")
DB = "queen_isolation"


def render(src, dst):
    """Copies specs and expected outputs, naming the internal schema."""
    os.makedirs(dst, exist_ok=True)
    for name in sorted(os.listdir(src)):
        with open(os.path.join(src, name)) as f:
            text = f.read()
        with open(os.path.join(dst, name), "w") as f:
            f.write(text.replace("@internal@", INTERNAL))


def test_isolation_specs():
    work = os.path.join(cluster.DIR, "isolation")
    shutil.rmtree(work, ignore_errors=True)
    render(os.path.join(ISOLATION, "specs"), os.path.join(work, "specs"))
    render(os.path.join(ISOLATION, "expected"), os.path.join(work, "expected"))
    with cluster.connect() as c:
        c.execute(f"DROP DATABASE IF EXISTS {DB} WITH (FORCE)")
        c.execute(f"CREATE DATABASE {DB}")
    r = subprocess.run(
        [REGRESS, "--use-existing", "--host=127.0.0.1", f"--port={cluster.PORT}", "--user=postgres",
         f"--dbname={DB}", f"--inputdir={work}", f"--outputdir={work}",
         f"--schedule={os.path.join(ISOLATION, 'isolation_schedule')}"],
        capture_output=True, text=True, timeout=600,
        # A permutation whose step waits longer than this is a failure.
        env={**os.environ, "PGISOLATIONTIMEOUT": "20"})
    diffs = os.path.join(work, "output_iso", "regression.diffs")
    if not os.path.exists(diffs):
        diffs = os.path.join(work, "regression.diffs")
    detail = ""
    if r.returncode != 0 and os.path.exists(diffs):
        with open(diffs) as f:
            detail = f.read()[:20000]
    assert r.returncode == 0, f"pg_isolation_regress failed:\n{r.stdout}\n{r.stderr}\n{detail}"
