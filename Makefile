# Two set-up commands: `make run` (annotate the bundled sample and print its schema) and `make test`.
# `make run` installs only the package (no C builds, no Spark); `make test` adds the dev extra,
# which builds mysqlclient (needs the MariaDB client headers, see README "Install").
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: run test install clean bench

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $(STAMP)

$(DEV_STAMP): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP) $(DEV_STAMP)

install: $(DEV_STAMP)

run: $(STAMP)
	$(BIN)/annotate-schema bookstore --output-schema

test: $(DEV_STAMP)
	$(BIN)/python -m pytest $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) data/database data/bookstore/bookstore.db workspace
