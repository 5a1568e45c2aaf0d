# queen: the two commands (see README.md), plus benchmarks.

.PHONY: run test bench setup fuzz

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
