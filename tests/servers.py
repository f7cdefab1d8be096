"""Start a real Daphne server for tests: the ASGI app as a user's browser will reach it.

The server gets its own SQLite file and lab data dir (migrated before it starts), so it never
touches the developer's `db.sqlite3` or `var/labs/`.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT_S = 30.0


def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
    env.update(overrides)
    return env


def _wait_for_port(proc: subprocess.Popen[bytes], port: int, log_path: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"daphne exited with {proc.returncode}:\n{log_path.read_text()}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"daphne did not listen on {port} within {STARTUP_TIMEOUT_S}s:\n{log_path.read_text()}")


@contextmanager
def running_daphne(work_dir: Path, **env_overrides: str) -> Iterator[str]:
    """Migrate a fresh DB in `work_dir`, serve `lab.asgi:application` on a free port, yield its URL."""
    work_dir.mkdir(parents=True, exist_ok=True)
    env = _server_env(work_dir, env_overrides)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO_ROOT, env=env, check=True
    )
    port = free_loopback_port()
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
            _wait_for_port(proc, port, log_path)
            yield f"http://127.0.0.1:{port}"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
