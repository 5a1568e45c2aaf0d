#!/usr/bin/env bash
# make fuzz: every decoder of queen_frames under libFuzzer for a bounded time
# (QUEEN_FUZZ_SECONDS per target, default 60). Not part of make test.
source "$(dirname "$0")/common.sh"
cd "$ROOT/fuzz"
if ! cargo fuzz --version >/dev/null 2>&1; then
    say "installing cargo-fuzz"
    cargo install cargo-fuzz --locked
fi
# cargo fuzz needs nightly flags; the stable toolchain accepts them this way.
export RUSTC_BOOTSTRAP=1
for target in frames segment push_body pop_body; do
    say "fuzzing $target for ${QUEEN_FUZZ_SECONDS:-60} s"
    cargo fuzz run "$target" -- -max_total_time="${QUEEN_FUZZ_SECONDS:-60}" -rss_limit_mb=1024 -malloc_limit_mb=512
done
