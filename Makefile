# buildwire: the two commands are `make demo` and `make test`; each installs what it needs.
SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
CARGO ?= cargo
VENV := $(CURDIR)/.venv
VPY := $(VENV)/bin/python
TARGET_DIR := $(or $(CARGO_TARGET_DIR),$(CURDIR)/target)
BIN := $(TARGET_DIR)/release/buildwire
# Debian packages the tests need, installed with apt-get only when missing: iproute2 for the
# network-namespace tests, redis-server and postgresql for the Haystack storage backends
# (the tests start their own throw-away servers on 127.0.0.1).
DEBIAN_PACKAGES := iproute2 redis-server postgresql fonts-dejavu-core
# The Haystack server test suites that run again on each storage backend (memory is the
# default run); BUILDWIRE_TEST_BACKEND makes their servers use a fresh Redis key space or
# PostgreSQL database.
HAYSTACK_SERVER_SUITES := --test server_http --test server_ws --test server_auth --test server_interop
# Protocol crates with cargo-fuzz targets (each has its own fuzz/ workspace).
FUZZ_CRATES := bacnet haystack opcua
FUZZ_SECONDS ?= 600

.PHONY: help demo test docs bench fuzz fmt lint venv develop system-deps release

help:
	@echo "make demo   build in release and run the demo on embedded defaults"
	@echo "make test   install what is missing, then lints and every Rust and Python test"
	@echo "make docs   build the user's guide (mdBook) into docs/book/"
	@echo "make bench  run the benchmarks (results go to bench-results/)"
	@echo "make fuzz   run every cargo-fuzz target for FUZZ_SECONDS (default 600) each"
	@echo "make fmt    format Rust and Python code"

$(VENV)/.deps-installed: requirements-dev.txt
	$(PYTHON) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -r requirements-dev.txt
	touch $@

venv: $(VENV)/.deps-installed

system-deps:
	@scripts/ensure-debian-packages.sh $(DEBIAN_PACKAGES)
	@command -v node >/dev/null || scripts/ensure-debian-packages.sh nodejs npm

# Builds the extension in place into .venv (debug profile: quick to build, fine for tests).
develop: venv
	VIRTUAL_ENV=$(VENV) $(VENV)/bin/maturin develop -q

release:
	$(CARGO) build --release -p buildwire-cli

demo: release venv
	BUILDWIRE=$(BIN) scripts/demo.sh

test: venv system-deps
	@scripts/run-checks.sh \
	  "cargo fmt::$(CARGO) fmt --all -- --check" \
	  "cargo clippy::$(CARGO) clippy --workspace --all-targets -- -D warnings" \
	  "cargo test::$(CARGO) test --workspace --exclude buildwire-python --no-fail-fast" \
	  "haystack server suites on redis::BUILDWIRE_TEST_BACKEND=redis $(CARGO) test -p buildwire-haystack $(HAYSTACK_SERVER_SUITES)" \
	  "haystack server suites on postgres::BUILDWIRE_TEST_BACKEND=postgres $(CARGO) test -p buildwire-haystack $(HAYSTACK_SERVER_SUITES)" \
	  "python build (maturin)::VIRTUAL_ENV=$(VENV) $(VENV)/bin/maturin develop -q" \
	  "ruff::$(VENV)/bin/ruff check python tests && $(VENV)/bin/ruff format --check python tests" \
	  "pytest::$(VPY) -m pytest -q" \
	  "user's guide (mdBook, pdoc)::scripts/build-docs.sh $(VENV)"

# The user's guide: docs/SUMMARY.md lists its pages; the HTML goes to docs/book/, with the
# Python API reference (pdoc, from the docstrings) in docs/book/python-api/.
docs: develop
	scripts/build-docs.sh $(VENV)

bench: release
	scripts/peers.sh
	mkdir -p bench-results
	$(BIN) bench limit udp --in-flight 7 --seconds 5 --json --plot bench-results/limit-udp.svg > bench-results/limit-udp.json
	$(BIN) bench limit tcp --request-size 64 --response-size 1024 --seconds 5 --json > bench-results/limit-tcp-1k.json
	$(BIN) bench limit tcp --request-size 64 --response-size 1048576 --seconds 5 --json > bench-results/limit-tcp-1m.json
	$(BIN) bench haystack decode --iterations 15 --json > bench-results/haystack-decode.json

# cargo-fuzz needs nightly-only compiler flags. Use the nightly toolchain when rustup has one;
# otherwise let the stable compiler accept them (RUSTC_BOOTSTRAP=1), since a toolchain
# download may not be possible on the machine.
fuzz:
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked
	@set -e; \
	if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then fz="cargo +nightly fuzz"; \
	else fz="env RUSTC_BOOTSTRAP=1 cargo fuzz"; fi; \
	for crate in $(FUZZ_CRATES); do \
	  [ -d crates/$$crate/fuzz ] || continue; \
	  for target in $$(cd crates/$$crate && $$fz list); do \
	    echo "=== fuzz $$crate/$$target for $(FUZZ_SECONDS)s"; \
	    (cd crates/$$crate && $$fz run $$target -- -max_total_time=$(FUZZ_SECONDS)); \
	  done; \
	done

fmt: venv
	$(CARGO) fmt --all
	$(VENV)/bin/ruff format python tests
	$(VENV)/bin/ruff check --fix python tests

lint: venv
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(VENV)/bin/ruff check python tests
