# queen: the two commands (see README.md), plus benchmarks, the fault suite, the soak,
# the upgrade test and a sharded deployment to try by hand (cluster-run).

.PHONY: run test test16 test17 test18 package bench setup fuzz faults soak upgrade cluster-run

run:
	@scripts/run.sh

test:
	@scripts/test.sh

test16:
	@scripts/pg16.sh

test17:
	@scripts/pg17.sh

test18:
	@scripts/pg18.sh

package:
	@scripts/package.sh

bench:
	@scripts/bench.sh $(WHAT)

setup:
	@scripts/setup.sh

fuzz:
	@scripts/fuzz.sh

faults:
	@scripts/faults.sh

soak:
	@scripts/faults.sh soak

upgrade:
	@scripts/upgrade.sh

cluster-run:
	@scripts/cluster.sh run
