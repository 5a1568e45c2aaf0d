# queen: the two commands (see README.md), plus benchmarks, the fault suite and the soak.

.PHONY: run test bench setup fuzz faults soak

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
