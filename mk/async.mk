# Precise timers for async code: keeptime::tokio (crates/keeptime, feature
# "tokio") and keeptime.asyncio (python/), over the core's process-wide
# waiter (crates/keeptime/src/waiter/, spec/waiter.md; docs/async.md).
# Their tests run in test-rust (the crate's self dev-dependency enables the
# feature) and test-python; test-async-doc checks the feature's rustdoc (make
# test-rust documents the crate without features).
#
#   make bench-async   tokio::time::sleep vs keeptime::tokio::sleep, methods
#                      interleaved: single sleeps of 250 µs-10 ms (blocking
#                      keeptime::sleep and block_in_place as references), then
#                      load rows (1,000-task bursts in two rounds, 10/100/1,000
#                      tasks ticking at 1 kHz, 1,000 tasks sleeping 10 ms) with
#                      the waiter's stated capacity and the targets (~90 s;
#                      KEEPTIME_BENCH_SCALE=0.25 for a quicker, noisier run)
#   make bench-async-python   python -m keeptime bench-async: asyncio.sleep vs
#                      keeptime.asyncio.sleep (asyncio's loop and uvloop's),
#                      the same rows and targets (~2-3 min)

.PHONY: bench-async bench-async-python test-async-doc

TEST_TARGETS += test-async-doc

test-async-doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --locked -p keeptime --features tokio,trace

bench-async:
	$(CARGO) bench --locked -p keeptime --features tokio --bench async

bench-async-python: python-install
	$(PY_BIN)/python -m keeptime bench-async
