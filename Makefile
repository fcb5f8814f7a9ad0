# Archiver: the two commands of the README are `make run` and `make test`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

UV := $(shell command -v uv 2>/dev/null || echo $(CURDIR)/.tools/bin/uv)
VENV := $(CURDIR)/.venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
# Three workers on two cores: with two, a fifth of the cores' time went idle (tests waiting
# on browsers, servers, kills and leases), which a third worker fills (a whole run on the
# 2-core machine: 930 s against 1034 s). Each test file stays on one worker, so module
# fixtures (the frozen build, the PostgreSQL server, a captured test site) are made once,
# in the order collected (tests/conftest.py puts the longest files first; xdist would sort
# by test count). A worker that crashes ends the run (it is reported as a failure): a
# replaced worker can leave the run waiting.
PYTEST_PARALLEL ?= -n 3 --dist loadfile --no-loadscope-reorder --max-worker-restart=0

.PHONY: help setup run test test-fast test-frozen lint format bench dist appimage icons system-deps test-system-deps clean

help:
	@echo "make run      set everything up and start Archiver"
	@echo "make test     set everything up and run the whole test suite (headless)"
	@echo "make lint     ruff (lint + format check) and mypy"
	@echo "make bench    run the benchmarks in tests/bench and print their figures"
	@echo "make dist     build the one-folder app (dist/archiver) and its Linux tarball"
	@echo "make test-frozen  make dist, then the smoke test against dist/archiver"

$(CURDIR)/.tools/bin/uv:
	@echo "uv not found: installing it into .tools/"
	python3 -m venv .tools || { echo "python3 -m venv failed: install python3-venv (sudo apt-get install python3-venv)"; exit 1; }
	.tools/bin/pip install --quiet uv

$(VENV)/.synced: pyproject.toml uv.lock | $(UV)
	$(UV) sync --frozen --compile-bytecode
	@touch $@

setup: $(VENV)/.synced

system-deps:
	@bash packaging/linux/install-system-deps.sh run

test-system-deps:
	@bash packaging/linux/install-system-deps.sh test

run: system-deps setup
	$(VENV)/bin/archiver browser install --if-missing || echo "continuing without a capture browser: replay and search still work"
	$(VENV)/bin/archiver

test: test-system-deps setup
	QT_QPA_PLATFORM=offscreen $(VENV)/bin/pytest $(PYTEST_PARALLEL) $(PYTEST_ARGS)

test-fast: setup
	QT_QPA_PLATFORM=offscreen $(VENV)/bin/pytest -m "unit or gui" $(PYTEST_ARGS)

lint: setup
	$(VENV)/bin/ruff check archiver_app tests packaging
	$(VENV)/bin/ruff format --check archiver_app tests packaging
	$(VENV)/bin/mypy

format: setup
	$(VENV)/bin/ruff format archiver_app tests packaging
	$(VENV)/bin/ruff check --fix archiver_app tests packaging

bench: test-system-deps setup
	@for b in tests/bench/bench_*.py; do echo "== $$b"; QT_QPA_PLATFORM=offscreen $(PY) $$b || exit 1; done

icons: setup
	QT_QPA_PLATFORM=offscreen $(PY) packaging/make_icons.py

# One-folder build in dist/archiver (build.spec generates the icons if needed), then
# dist/archiver-<version>-linux-<arch>.tar.gz. Other platforms: docs/packaging.md.
dist: setup
	rm -rf dist/archiver
	$(VENV)/bin/pyinstaller --noconfirm --clean --log-level WARN build.spec
	bash packaging/linux/make-tarball.sh

appimage: dist
	bash packaging/linux/appimage.sh

test-frozen: test-system-deps dist
	QT_QPA_PLATFORM=offscreen ARCHIVER_FROZEN_APP=$(CURDIR)/dist/archiver/archiver \
		$(VENV)/bin/pytest tests/e2e/test_frozen.py $(PYTEST_ARGS)

clean:
	rm -rf build dist .pytest_cache .mypy_cache .ruff_cache
