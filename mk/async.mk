# Precise timers for async code: keeptime::tokio (crates/keeptime,
# feature "tokio") and keeptime.asyncio (python/). Their tests run in
# test-rust (the crate's self dev-dependency enables the feature) and
# test-python; test-async-doc checks the feature's rustdoc (make test-rust
# documents the crate without features).
#
#   make bench-async   tokio::time::sleep vs keeptime::tokio::sleep vs
#                      block_in_place(keeptime::sleep), blocking keeptime::sleep
#                      as the reference; 1,000 concurrent sleeps' CPU (~35 s)
#   make bench-async-python   python -m keeptime bench-async: asyncio.sleep vs
#                      keeptime.asyncio.sleep (asyncio's loop and uvloop's),
#                      blocking keeptime.sleep as the reference (~25 s)

.PHONY: bench-async bench-async-python test-async-doc

TEST_TARGETS += test-async-doc

test-async-doc:
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc --no-deps --locked -p keeptime --features tokio,trace

bench-async:
	$(CARGO) bench --locked -p keeptime --features tokio --bench async

bench-async-python: python-install
	$(PY_BIN)/python -m keeptime bench-async
