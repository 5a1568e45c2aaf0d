"""The upgrade of PostgreSQL itself (scripts/pg_upgrade.sh runs it): a
database of the current version on PostgreSQL 15 is filled as the upgrade
test fills one (queues with options, segments in several partitions, a
consumer group part-way, open leases, dead letters, KV rows, locks, timers,
an ephemeral queue), pg_upgrade moves the cluster to PostgreSQL 18, and
then every reader answers and every row reads as before, the leases taken
before renew and ack, the group goes on from its cursor, the dead letters
retry, and the workers run on the new server (a timer due now fires, the
maintenance lease advances).

    pg_upgrade.py fill DB STATE   on the old cluster: fill, record into STATE
    pg_upgrade.py check DB STATE  on the new cluster: compare, then use
"""

import json
import re
import sys

import upgrade  # first: it puts the fault suite's modules on the path
from upgrade import check, connect, one, say

import cluster  # noqa: E402


ROLLUP_TIME = re.compile(r'"(rolledUpAt|rolled_up_at)": "[^"]*"')


def steady(snap):
    """A snapshot without the time of the KV usage rollup: the sweeper rolls
    the usage up again when it starts on the new server (the figures must
    stay the same; the time is its own)."""
    return {k: [ROLLUP_TIME.sub(r'"\1": "…"', line) for line in v] for k, v in snap.items()}


def fill(db, state):
    upgrade.recreate(db)
    with connect(db) as c:
        c.execute("CREATE EXTENSION queen")
    # The workers start on the database, now that it has the extension.
    cluster.restart()
    with connect(db) as c:
        cluster.wait_for(lambda: upgrade.maintenance_token(c) > 0, "the maintenance lease is claimed",
                         timeout=60)
        cluster.wait_for(lambda: one(c, "SELECT queen.sweeper_metrics()")["kvRollupsTotal"] >= 1,
                         "the sweeper's first rollup", timeout=60)
        ids = upgrade.fill(c)
        before = upgrade.snapshot(c, ids)
        version = upgrade.version(c)
        server = one(c, "SHOW server_version_num")
    with open(state, "w") as f:
        json.dump({"ids": ids, "before": before, "version": version, "server": server}, f)
    say(f"filled {db} at {version} on PostgreSQL {server}: {len(before['readers'])} reader answers")


def check_after(db, state):
    with open(state) as f:
        was = json.load(f)
    with connect(db) as c:
        server = one(c, "SHOW server_version_num")
        check(int(server) // 10000 > int(was["server"]) // 10000,
              f"the cluster runs PostgreSQL {server} (was {was['server']})")
        check(upgrade.version(c) == was["version"], f"the extension is still at {was['version']}")
        diff = upgrade.diff_sections(steady(was["before"]), steady(upgrade.snapshot(c, was["ids"])),
                                     "before", "after")
        if diff:
            print(diff)
        check(not diff, "every reader answers and every row reads as before pg_upgrade")
        upgrade.after(c, was["ids"])
    say("passed")


if __name__ == "__main__":
    try:
        if len(sys.argv) != 4 or sys.argv[1] not in ("fill", "check"):
            sys.exit(__doc__)
        (fill if sys.argv[1] == "fill" else check_after)(sys.argv[2], sys.argv[3])
    except upgrade.Failed as e:
        say(f"FAILED: {e}")
        sys.exit(1)
