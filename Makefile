# Kafka Lab: `make run` serves the lab, `make test` runs the whole suite.
# Both create .venv/ when it is missing and skip pip when pyproject.toml, setup.py and the C
# extension (engine/storage/_columnar.c) have not changed. Both compile the UI's translations
# (locale/*/LC_MESSAGES/*.po -> .mo, with the standard library only: no GNU gettext needed) when
# a catalogue changed; the .mo files are not committed.

SHELL := /bin/bash
.DEFAULT_GOAL := help

PYTHON ?= python3
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=
# The suite runs on two pytest-xdist workers (the machine's two cores). tests/spark and tests/e2e are a
# unit of work each (tests/conftest.py's scheduler), each run by one worker: see its docstring for why.
# PYTEST_WORKERS=0 runs it all in one process.
PYTEST_WORKERS ?= 2

VENV := .venv
VENV_PY := $(CURDIR)/$(VENV)/bin/python
PYPROJECT_HASH := $(shell cat pyproject.toml setup.py engine/storage/_columnar.c | sha256sum | cut -c1-16)
RUN_STAMP := $(VENV)/.installed-$(PYPROJECT_HASH)
TEST_STAMP := $(VENV)/.installed-test-$(PYPROJECT_HASH)
MO_FILES := $(patsubst %.po,%.mo,$(wildcard locale/*/LC_MESSAGES/*.po))
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: help run test install install-test messages migrate check chromium java services clean distclean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-13s %s\n", $$1, $$2}'

run: install migrate ## serve the lab with Daphne on HOST:PORT (default 127.0.0.1:8000)
	@echo "Kafka Lab: open http://$(HOST):$(PORT)/  (Ctrl-C stops it)"
	$(VENV)/bin/daphne -b $(HOST) -p $(PORT) lab.asgi:application

test: install-test chromium java services ## run the whole test suite (on PostgreSQL; Redis and a Spark cluster where tests need them)
	DJANGO_ALLOW_ASYNC_UNSAFE=true SPARK_LOCAL_IP=127.0.0.1 PYSPARK_PYTHON=$(VENV_PY) \
		$(VENV_PY) -m pytest -n $(PYTEST_WORKERS) --dist loadscope $(PYTEST_ARGS)

install: $(RUN_STAMP) $(MO_FILES) ## create .venv/ and install the lab into it (translations compiled)

install-test: $(TEST_STAMP) $(MO_FILES) ## same, with the test extras

messages: $(MO_FILES) ## compile the translations (refuses an untranslated or fuzzy entry)

# A catalogue is compiled when it (or the compiler) changed; an untranslated, fuzzy or broken entry
# stops the install with its file, line and msgid.
locale/%.mo: locale/%.po lab/tools/compile_messages.py | $(VENV_PY)
	$(VENV_PY) -m lab.tools.compile_messages $<

migrate: install ## apply database migrations
	$(VENV_PY) manage.py migrate --noinput

check: install ## Django's system checks
	$(VENV_PY) manage.py check

$(VENV_PY):
	$(PYTHON) -m venv $(VENV)

$(RUN_STAMP): | $(VENV_PY)
	$(VENV_PY) -m pip install --quiet -e .
	rm -f $(VENV)/.installed-*
	touch $@

$(TEST_STAMP): | $(VENV_PY)
	$(VENV_PY) -m pip install --quiet -e '.[test]'
	rm -f $(VENV)/.installed-*
	touch $@ $(RUN_STAMP)

chromium: ## install Debian's chromium for the browser tests, if it is missing
	@if [ -x /usr/bin/chromium ]; then \
		echo "chromium: $$(/usr/bin/chromium --version 2>/dev/null | tail -n 1)"; \
	elif [ -n "$(SUDO)" ] && ! sudo -n true 2>/dev/null; then \
		echo "chromium: /usr/bin/chromium is missing and cannot be installed (not root, no sudo): browser tests cannot run"; \
	else \
		$(SUDO) apt-get update && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y chromium \
		|| echo "chromium: apt-get could not install chromium: browser tests cannot run"; \
	fi

java: ## install Debian's Java runtime for Spark (PySpark 4 needs Java 17+), if java is missing
	@if command -v java >/dev/null; then \
		echo "java: $$(java -version 2>&1 | head -n 1)"; \
	elif [ -n "$(SUDO)" ] && ! sudo -n true 2>/dev/null; then \
		echo "java: missing and cannot be installed (not root, no sudo): the Spark tests cannot run"; \
	else \
		$(SUDO) apt-get update && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y default-jre-headless \
		|| echo "java: apt-get could not install default-jre-headless: the Spark tests cannot run"; \
	fi

# The suite runs on a real PostgreSQL and Redis (lab/local_services.py): the machine's own on
# 127.0.0.1:5432 and :6379 when they answer, otherwise private servers the test run starts (and
# stops) in a temp dir; Debian's postgresql and redis-server are installed first if missing. This
# target does that check (and any install) up front, so a fresh machine's set-up shows before the
# tests start.
services: install-test ## find PostgreSQL and Redis for the tests (installing Debian's packages if missing)
	$(VENV_PY) -m lab.local_services

clean: ## remove the local databases, collected static files, lab data and caches (keeps .venv/)
	rm -rf db.sqlite3 test_db.sqlite3 staticfiles/ var/ .pytest_cache/ .hypothesis/ spark-warehouse/ metastore_db/ derby.log
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean ## also remove .venv/
	rm -rf $(VENV) *.egg-info
