# How fast a fresh sleeper's learning converges, and a sleeper started from a
# host profile (crates/keeptime/benches/convergence.rs).
#
#   make bench-convergence   CPU ÷ the oracle's least CPU and the late share after
#                            100, 300, 1 000 and 3 000 sleeps at 250 µs, 1 ms,
#                            2.5 ms and 10 ms (1 % target), and the strict target's
#                            late share: replays of every trace in KEEPTIME_TRACES
#                            (default: shared/traces beside the repository; skipped
#                            with a message when absent) and in
#                            crates/keeptime/tests/data (deterministic, ~2 min),
#                            each also split: a profile of its first round, then a
#                            sleeper from it and a fresh one replaying the rest,
#                            and replayed from 24 starting points (means; ~20 s,
#                            KEEPTIME_CONVERGENCE_STARTS=0 skips them);
#                            then live on this host, a fresh keeptime sleeper, one
#                            started from a profile of a trace recorded in the same
#                            run, and spin_sleep against that trace's oracle
#                            (~170 s; CONVERGENCE_LIVE=0 skips it); in both, the
#                            oracle's plan followed unchanged (the swing's floor).
#                            Targets are printed met/MISSED, never asserted.

KEEPTIME_TRACES  ?= $(abspath ../shared/traces)
CONVERGENCE_LIVE ?= 1

.PHONY: bench-convergence

bench-convergence:
	KEEPTIME_TRACES=$(KEEPTIME_TRACES) KEEPTIME_CONVERGENCE_LIVE=$(CONVERGENCE_LIVE) \
		$(CARGO) bench --locked -p keeptime --features trace --bench convergence
