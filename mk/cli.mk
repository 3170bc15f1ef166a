# The keeptime command (crates/keeptime-cli): `make bench` runs its bench,
# every way of waiting compared on this machine (about a minute). Its tests run
# in test-rust; the JSON result schema is checked there too (tests/cli.rs).
# `make bench BENCH_ARGS="--crowd 16"` adds the crowd block: 16
# threads sleeping 1 ms at once, keeptime vs clock-nanosleep-abs vs spin-pause
# (about 7 s more).

.PHONY: bench-cli fuzz-cli


bench-cli:
	$(CARGO) run --release --locked -p keeptime-cli -- bench $(BENCH_ARGS)

# Fuzz the duration parser (needs cargo-fuzz and a nightly toolchain, or
# RUSTC_BOOTSTRAP=1 on stable). Not part of `make test`.
FUZZ_SECONDS ?= 600
fuzz-cli:
	cd crates/keeptime-cli && $(CARGO) +nightly fuzz run duration -- -max_total_time=$(FUZZ_SECONDS)
