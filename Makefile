# queen: the two commands (see README.md), plus benchmarks, the fault suite, the soak
# and the upgrade test.

.PHONY: run test bench setup fuzz faults soak upgrade

run:
	@scripts/run.sh

test:
	@scripts/test.sh

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
