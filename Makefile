# keeptime: one Makefile for every part of the repository.
#
#   make bench   the main job: compare every way of waiting on this machine,
#                then write the run's HTML report and print its path
#   make test    everything CI checks: formatting, lints, tests, spec vectors,
#                the house check
#
# Each front end adds its own targets in mk/<part>.mk, appending to
# TEST_TARGETS, so parts can be worked on without touching each other's rules.
# Each part's own benchmark has a target of its own: bench-peers (the core
# against std, a pure spin and spin_sleep), bench-python, bench-go,
# bench-java, bench-c.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
CARGO ?= cargo

# KEEPTIME_PROFILE starts keeptime's own sleepers from a host profile in any
# program (spec/estimator.md, Default sleepers). The project's tests and
# benches measure those sleepers fresh, whatever the caller's environment;
# the runs from a profile are explicit (bench-convergence's profile rows).
unexport KEEPTIME_PROFILE

TEST_TARGETS := test-rust

.PHONY: all test bench bench-peers test-rust fmt lint clean
all: test

include $(sort $(wildcard mk/*.mk))

test: $(TEST_TARGETS)
	@echo "make test: all parts passed ($(TEST_TARGETS))"

test-rust:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets --locked -- -D warnings
	$(CARGO) test --workspace --locked
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --locked --workspace
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --locked -p keeptime --all-features

# The core's side-by-side comparison with std::thread::sleep, a pure spin and
# the spin_sleep crate, in one process (crates/keeptime/benches/peers/).
bench-peers:
	$(CARGO) bench --locked -p keeptime --bench peers

# The main job: `keeptime bench` with its defaults (mk/cli.mk).
bench: bench-cli

fmt:
	$(CARGO) fmt --all

clean:
	$(CARGO) clean
