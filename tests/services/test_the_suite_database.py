"""The suite's database is a real PostgreSQL made for this run (lab.pytest_services), unless
KAFKA_LAB_TEST_DATABASE=sqlite asks for SQLite."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
PROBE = '''
from django.db import connection
import pytest

@pytest.mark.django_db
def test_probe():
    print("vendor=" + connection.vendor + " name=" + str(connection.settings_dict["NAME"]))
'''


def _pytest(tmp_path: Path, **env: str) -> subprocess.CompletedProcess:
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE)
    environment = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "KAFKA_LAB_TEST_DATABASE")}
    environment.update(KAFKA_LAB_TEST_DB=str(tmp_path / "probe.sqlite3"), **env)
    return subprocess.run([sys.executable, "-m", "pytest", str(probe), "-p", "no:cacheprovider", "-s", "-q",
                           "--rootdir", str(REPO_ROOT), "-c", str(REPO_ROOT / "pyproject.toml")],
                          cwd=REPO_ROOT, env=environment, capture_output=True, text=True, timeout=300)


@pytest.mark.django_db
def test_this_run_uses_a_postgresql_test_database_of_its_own() -> None:
    if os.environ.get("KAFKA_LAB_TEST_DATABASE", "").lower() == "sqlite":
        pytest.skip("KAFKA_LAB_TEST_DATABASE=sqlite: this run is on SQLite by request")
    run_database = os.environ["DATABASE_URL"].rsplit("/", 1)[1]

    assert connection.vendor == "postgresql"
    worker = os.environ.get("PYTEST_XDIST_WORKER")      # make test runs two workers, each its own database
    assert connection.settings_dict["NAME"] == f"test_{run_database}" + (f"_{worker}" if worker else "")
    assert run_database.startswith(f"kafka_lab_{os.getpid()}_")


def test_sqlite_on_request(tmp_path: Path) -> None:
    on_sqlite = _pytest(tmp_path, KAFKA_LAB_TEST_DATABASE="sqlite")

    assert on_sqlite.returncode == 0, on_sqlite.stdout + on_sqlite.stderr
    assert f"vendor=sqlite name={tmp_path / 'probe.sqlite3'}" in on_sqlite.stdout


def test_an_unknown_choice_is_refused_by_name(tmp_path: Path) -> None:
    refused = _pytest(tmp_path, KAFKA_LAB_TEST_DATABASE="oracle")

    assert refused.returncode != 0
    assert "KAFKA_LAB_TEST_DATABASE='oracle'" in refused.stderr + refused.stdout
