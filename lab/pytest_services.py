"""The test suite's database, chosen before Django's settings load (pyproject: addopts `-p lab.pytest_services`).

A pytest plugin, loaded only by pytest. It lives in `lab` rather than `tests` because `-p` imports it
before pytest puts the project's root on sys.path: `lab` is installed, so `.venv/bin/pytest` finds
it as well as `python -m pytest`.

pytest-django reads the settings while pytest loads its initial conftests — before any conftest.py
runs — so DATABASE_URL has to be in the environment earlier than a conftest could put it there:
this plugin's hook runs first. By default every DB test runs on a real PostgreSQL: a database made
for this run by lab.local_services (the machine's server on 127.0.0.1:5432, or a private one it
starts), under which pytest-django creates `test_<that name>` — unique per run, so CI and a
developer on one machine never share one. KAFKA_LAB_TEST_DATABASE=sqlite runs on SQLite instead
(quicker to start, for a local run; KAFKA_LAB_TEST_DB names its file as before).

The Daphne servers tests start (tests/servers.py) inherit DATABASE_URL and get a database each.
A REDIS_URL (or KAFKA_LAB_REDIS_URL) from the caller's shell is dropped: it would switch the layer
and placement on for every test; tests that want Redis ask for the `redis_url` fixture.
"""
from __future__ import annotations

import os

import pytest

CHOICES = ("postgresql", "sqlite")
_chosen: list[str] = []


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config, parser: pytest.Parser, args: list[str]) -> None:
    options = early_config.known_args_namespace
    if getattr(options, "help", False) or getattr(options, "version", False):
        return
    for name in ("REDIS_URL", "KAFKA_LAB_REDIS_URL"):
        os.environ.pop(name, None)
    choice = os.environ.get("KAFKA_LAB_TEST_DATABASE", "").strip().lower() or "postgresql"
    if choice not in CHOICES:
        raise pytest.UsageError(f"KAFKA_LAB_TEST_DATABASE={choice!r}: expected one of {', '.join(CHOICES)}")
    if choice == "sqlite":
        os.environ.pop("DATABASE_URL", None)
        _chosen.append(f"SQLite ({os.environ.get('KAFKA_LAB_TEST_DB') or 'test_db.sqlite3'}; "
                       "KAFKA_LAB_TEST_DATABASE=sqlite)")
        return
    from lab.local_services import ServiceUnavailable, postgres_server, postgres_url

    try:
        url = postgres_url()
    except ServiceUnavailable as error:
        raise pytest.UsageError(f"The suite runs on PostgreSQL and none could be had: {error}\n"
                                "(KAFKA_LAB_TEST_DATABASE=sqlite runs it on SQLite instead)") from None
    os.environ["DATABASE_URL"] = url
    # Connections closed after each request, as Django's default has them (the deployment keeps them
    # open for a minute): a thread's connection kept from one test would outlive pytest-django's
    # permission to touch the database into the next test, and hold the test DB open at teardown.
    os.environ["KAFKA_LAB_DB_CONN_MAX_AGE_S"] = "0"
    # pytest-django drops its test database at the end; a run cut short (or a thread's connection
    # still open then) would leave it behind, so it goes at exit with the run's database too.
    # Under pytest-xdist each worker runs this hook itself (its own run database), and pytest-django
    # names the test database after the worker too: test_<database>_gw0.
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    test_database = f"test_{url.rsplit('/', 1)[1]}" + (f"_{worker}" if worker else "")
    postgres_server().created.append(test_database)
    # The settings would name the test database after KAFKA_LAB_TEST_DB's file; the run's own
    # unique name (test_<database>) keeps parallel runs apart without it.
    os.environ.pop("KAFKA_LAB_TEST_DB", None)
    _chosen.append(f"PostgreSQL, test database {test_database} on {postgres_server().describe()}")


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"database: {chosen}" for chosen in _chosen]
