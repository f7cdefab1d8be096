"""lab.local_services: the machine's PostgreSQL/Redis when they answer, else private servers that
go away with the process that started them.

The private servers are started in a child process (KAFKA_LAB_SERVICES=private), as a test run or
a benchmark would start them, so the test can watch them stop when that process exits — normally
(atexit) or killed (the parent-death signal).
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
import redis

from lab import local_services
from lab.local_services import ServiceUnavailable

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
GONE_WITHIN_S = 30.0   # how long a stopped server may take to close its port (a wait, not a measurement)

# Starts both private servers, prints what it got as one JSON line, then waits for its stdin to close.
CHILD = """
import json, sys
from lab import local_services as s
pg, rd = s.postgres_url(), s.redis_url()
print(json.dumps({"postgres": pg, "redis": rd, "pg_dir": str(s.postgres_server().directory),
                  "redis_dir": str(s.redis_server().directory), "second_pg": s.postgres_url(),
                  "second_redis": s.redis_url()}), flush=True)
sys.stdin.read()
"""


def _start_child() -> tuple[subprocess.Popen, dict]:
    env = dict(os.environ, KAFKA_LAB_SERVICES="private")
    child = subprocess.Popen([sys.executable, "-c", CHILD], cwd=REPO_ROOT, env=env, stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = child.stdout.readline()
    if not line:
        child.kill()
        pytest.fail(f"the child started no servers: {child.stderr.read()}")
    return child, json.loads(line)


def _port(url: str) -> int:
    return int(url.split("@")[-1].split("//")[-1].split("/")[0].rsplit(":", 1)[1])


def _listening(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
        return True
    except OSError:
        return False


def _until_closed(port: int) -> bool:
    deadline = time.monotonic() + GONE_WITHIN_S
    while time.monotonic() < deadline:
        if not _listening(port):
            return True
        time.sleep(0.1)
    return False


def test_private_servers_serve_fresh_databases_and_stop_with_their_process() -> None:
    child, got = _start_child()
    try:
        pg_port, redis_port = _port(got["postgres"]), _port(got["redis"])
        assert pg_port != local_services.STANDARD_POSTGRES_PORT and redis_port != local_services.STANDARD_REDIS_PORT
        with psycopg.connect(got["postgres"], autocommit=True) as connection:
            connection.execute("CREATE TABLE t (v text)")
            connection.execute("INSERT INTO t VALUES ('kept')")
            assert connection.execute("SELECT v FROM t").fetchone() == ("kept",)
            data_dir = connection.execute("SHOW data_directory").fetchone()[0]
            assert data_dir.startswith(got["pg_dir"])
        with psycopg.connect(got["second_pg"]) as other:   # a second call: a second, empty database
            assert got["second_pg"] != got["postgres"]
            assert other.execute("SELECT to_regclass('t')").fetchone() == (None,)
        client = redis.Redis.from_url(got["redis"])
        assert client.ping() and client.set("k", "v")
        assert got["second_redis"].rsplit("/", 1)[1] != got["redis"].rsplit("/", 1)[1]
    finally:
        child.stdin.close()
        child.wait(timeout=60)

    assert _until_closed(pg_port) and _until_closed(redis_port)
    assert not Path(got["pg_dir"]).exists() and not Path(got["redis_dir"]).exists()


def test_a_killed_process_leaves_no_server_running() -> None:
    child, got = _start_child()
    child.send_signal(signal.SIGKILL)   # no atexit: the kernel's parent-death signal stops the servers
    child.wait(timeout=30)

    assert _until_closed(_port(got["postgres"])) and _until_closed(_port(got["redis"]))
    for directory in (got["pg_dir"], got["redis_dir"]):   # what only atexit would have removed
        shutil.rmtree(directory, ignore_errors=True)


def test_the_machines_servers_are_used_when_they_answer() -> None:
    if not local_services._postgres_answers("127.0.0.1", local_services.STANDARD_POSTGRES_PORT):
        pytest.skip("no PostgreSQL accepts user postgres without a password on 127.0.0.1:5432 here")
    first, second = local_services.postgres_url(), local_services.postgres_url()

    assert first != second and all(f":{local_services.STANDARD_POSTGRES_PORT}/" in u for u in (first, second))
    for url in (first, second):
        with psycopg.connect(url) as connection:
            assert connection.execute("SELECT current_database()").fetchone()[0] == url.rsplit("/", 1)[1]


def test_redis_callers_get_different_database_numbers() -> None:
    numbers = {int(local_services.redis_url().rsplit("/", 1)[1]) for _ in range(3)}

    assert len(numbers) == 3 and 0 not in numbers


def test_a_bad_services_mode_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_LAB_SERVICES", "cloud")

    with pytest.raises(ServiceUnavailable, match="KAFKA_LAB_SERVICES='cloud'"):
        local_services._services_mode()
