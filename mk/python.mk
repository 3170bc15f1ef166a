# The Python package in python/: PyO3 + maturin over the Rust core.
#
#   make test-python    rustfmt and clippy for python/src, then a virtualenv
#                       (python/.venv), `pip install ./python[test]` (maturin
#                       builds the abi3 wheel in release mode), mypy --strict
#                       and stubtest for the typing, and pytest: spec vectors,
#                       bad input, threads, Ctrl-C, the bench's JSON schema
#   make bench-python   python -m keeptime bench: time.sleep, a busy loop and
#                       keeptime's modes on this machine (see python/README.md)
#
# Works on a fresh machine with only the registries: pip fetches maturin,
# pytest, jsonschema and mypy from PyPI, cargo the crates from crates.io.

PYTHON ?= python3
PY_VENV := python/.venv
PY_BIN := $(PY_VENV)/bin
PY_BENCH_ARGS ?=

.PHONY: test-python bench-python python-install

TEST_TARGETS += test-python

$(PY_BIN)/python:
	$(PYTHON) -m venv $(PY_VENV)
	$(PY_BIN)/python -m pip install -q --upgrade pip

# Always rebuilds (pip rebuilds local directories; cargo only what changed).
python-install: $(PY_BIN)/python
	$(PY_BIN)/python -m pip install -q --disable-pip-version-check "./python[test]"

test-python: python-install
	$(CARGO) fmt --manifest-path python/Cargo.toml -- --check
	$(CARGO) clippy -q --manifest-path python/Cargo.toml --locked -- -D warnings
	cd python && .venv/bin/mypy --strict --no-error-summary keeptime
	cd python/tests && ../.venv/bin/python -m mypy.stubtest keeptime --concise
	cd python/tests && ../.venv/bin/python -m pytest -p no:cacheprovider -c ../pyproject.toml --rootdir .. .

bench-python: python-install
	$(PY_BIN)/python -m keeptime bench $(PY_BENCH_ARGS)
