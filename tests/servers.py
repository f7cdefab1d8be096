"""Start a real Daphne server for tests: the ASGI app as a user's browser will reach it.

The server gets its own database (a SQLite file, or a fresh PostgreSQL database when the suite
runs on PostgreSQL) and lab data dir, migrated before it starts, so it never touches the
developer's `db.sqlite3` or `var/labs/`.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lab.local_services import postgres_url
from lab.serve import free_port, wait_for_port

REPO_ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT_S = 30.0


def _server_env(work_dir: Path, overrides: dict[str, str]) -> dict[str, str]:
    env = dict(os.environ)
    # The pytest process needs this (see conftest); the server must keep Django's async checks.
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    env.update(
        DJANGO_SETTINGS_MODULE="lab.settings",
        KAFKA_LAB_DB=str(work_dir / "db.sqlite3"),
        KAFKA_LAB_DATA_DIR=str(work_dir / "labs"),
        PYTHONUNBUFFERED="1",
    )
    # On PostgreSQL (lab/pytest_services.py) each server gets a fresh database, as it would a
    # fresh SQLite file: it never shares rows with pytest-django's test DB or another server.
    if env.get("DATABASE_URL") and "DATABASE_URL" not in overrides:
        env["DATABASE_URL"] = postgres_url()
    env.update(overrides)
    return env




@contextmanager
def running_daphne(work_dir: Path, **env_overrides: str) -> Iterator[str]:
    """Migrate a fresh DB in `work_dir`, serve `lab.asgi:application` on a free port, yield its URL."""
    work_dir.mkdir(parents=True, exist_ok=True)
    env = _server_env(work_dir, env_overrides)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO_ROOT, env=env, check=True
    )
    port = free_port()
    log_path = work_dir / "daphne.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "lab.asgi:application"],
            cwd=REPO_ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_for_port(proc, port, log_path, STARTUP_TIMEOUT_S)
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
