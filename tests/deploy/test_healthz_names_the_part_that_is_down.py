"""A real Daphne started while PostgreSQL or Redis is down: one log line names the part and its
address (no traceback), and /healthz answers 503 saying which part failed."""
from __future__ import annotations

import json
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from lab import local_services
from lab.serve import free_port, wait_for_port
from tests.deploy.cluster import worker_env
from tests.servers import REPO_ROOT, STARTUP_TIMEOUT_S


@contextmanager
def _daphne(tmp_path: Path, database_url: str, redis_url: str) -> Iterator[tuple[str, Path]]:
    env = worker_env(tmp_path, database_url, redis_url, KAFKA_LAB_DATA_DIR=str(tmp_path / "labs"))
    if not redis_url:
        env.pop("REDIS_URL")
    port = free_port()
    log_path = tmp_path / "daphne.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                                    "lab.asgi:application"], cwd=REPO_ROOT, env=env, stdout=log,
                                   stderr=subprocess.STDOUT)
    try:
        wait_for_port(process, port, log_path, STARTUP_TIMEOUT_S)
        yield f"http://127.0.0.1:{port}", log_path
    finally:
        process.terminate()
        process.wait(timeout=10)


def _healthz(base_url: str) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(base_url + "/healthz", timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _closed_port() -> int:
    return free_port()   # nothing listens there


def test_with_postgresql_down_the_log_says_so_in_one_line_and_healthz_is_503(tmp_path: Path) -> None:
    port = _closed_port()
    with _daphne(tmp_path, f"postgres://postgres@127.0.0.1:{port}/kafka_lab", "") as (url, log_path):
        status, body = _healthz(url)
    log = log_path.read_text()

    assert status == 503 and body["status"] == "error"
    assert body["database"].startswith("error: ") and str(port) in body["database"]
    assert body["channel_layer"] == "in-memory"
    assert f"the database (postgresql at 127.0.0.1:{port}/kafka_lab) is unreachable" in log
    assert "Traceback" not in log, log


def test_with_redis_down_the_log_says_so_in_one_line_and_healthz_is_503(tmp_path: Path) -> None:
    database_url = local_services.postgres_url()
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO_ROOT, check=True,
                   env=worker_env(tmp_path, database_url, ""))
    port = _closed_port()
    with _daphne(tmp_path, database_url, f"redis://127.0.0.1:{port}/0") as (url, log_path):
        status, body = _healthz(url)
    log = log_path.read_text()

    assert status == 503 and body["status"] == "error"
    assert body["database"] == "ok"
    assert body["channel_layer"].startswith("error: ") and str(port) in body["channel_layer"]
    assert body["worker"]["placement"] is True
    assert f"the channel layer (Redis at 127.0.0.1:{port}/0) is unreachable" in log
    assert "Traceback" not in log, log


def test_with_both_up_healthz_names_the_worker_and_says_ok(tmp_path: Path) -> None:
    database_url, redis_url = local_services.postgres_url(), local_services.redis_url()
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO_ROOT, check=True,
                   env=worker_env(tmp_path, database_url, redis_url))
    with _daphne(tmp_path, database_url, redis_url) as (url, _):
        status, body = _healthz(url)

    assert status == 200, body
    assert (body["database"], body["channel_layer"]) == ("ok", "ok")
    assert body["worker"]["placement"] is True and body["worker"]["name"]
    assert (body["worker"]["heartbeat"], body["worker"]["listening"]) == ("ok", "ok")
