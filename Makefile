# Two set-up commands: `make run` (annotate the bundled sample and print its schema) and `make test`.
# `make run` installs only the package (no C builds, no Spark); `make test` adds the dev extra,
# which builds mysqlclient (needs the MariaDB client headers, see README "Install").
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: run test install clean bench bytecode

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(STAMP)

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(DEV_STAMP)

# An editable install writes no bytecode for nl2sql, and where PYTHONDONTWRITEBYTECODE is set
# Python never writes it either: every process (each console script, each test's subprocess)
# then compiled nl2sql's modules again, about 90 ms of an MCP server's start-up (440M of its
# 3,550M instructions). compileall writes what is missing or stale (a no-op when up to date).
bytecode: | $(BIN)/python
	$(BIN)/python -m compileall -q nl2sql

install: $(DEV_STAMP) bytecode

run: $(STAMP) bytecode
	$(BIN)/annotate-schema bookstore --output-schema

# The suite runs on every core (pytest-xdist); the Spark tests share one worker and its one
# Spark Connect server (tests/conftest.py groups them). PYTEST_ARGS adds options
# (PYTEST_ARGS="-k guard -x"); PYTEST_WORKERS=0 runs it in one process.
PYTEST_WORKERS ?= auto
test: $(DEV_STAMP) bytecode
	$(BIN)/python -m pytest -n $(PYTEST_WORKERS) --dist loadgroup --durations=20 $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) data/database data/bookstore/bookstore.db workspace
