"""Several real Daphne worker processes behind no balancer: one PostgreSQL database (migrated
once), one Redis database, a private data dir each — what docs/deployment.md describes, on
loopback. A test picks the worker each socket goes to, and may kill one with SIGKILL.
"""
from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from lab.serve import free_port, wait_for_port
from tests.servers import REPO_ROOT, STARTUP_TIMEOUT_S


@dataclass
class Worker:
    name: str
    url: str
    process: subprocess.Popen
    log_path: Path

    def kill(self) -> None:
        """SIGKILL: no shutdown code runs (no journal flush, no placement released)."""
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")


def worker_env(work_dir: Path, database_url: str, redis_url: str, **overrides: str) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)   # the servers keep Django's async checks
    env.pop("KAFKA_LAB_TEST_DB", None)
    env.update(DJANGO_SETTINGS_MODULE="lab.settings", DATABASE_URL=database_url, REDIS_URL=redis_url,
               KAFKA_LAB_SECRET_KEY=overrides.pop("KAFKA_LAB_SECRET_KEY", secrets.token_urlsafe(50)),
               PYTHONUNBUFFERED="1")
    env.update(overrides)
    return env


@contextmanager
def running_workers(work_dir: Path, database_url: str, redis_url: str, count: int = 2,
                    each: list[dict[str, str]] | None = None, **overrides: str) -> Iterator[list[Worker]]:
    """`count` Daphne workers on one database and one Redis; every one is stopped at the end.
    `each[n]`: settings of worker n alone."""
    work_dir.mkdir(parents=True, exist_ok=True)
    shared = worker_env(work_dir, database_url, redis_url, **overrides)
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO_ROOT,
                   env=shared, check=True)
    workers: list[Worker] = []
    try:
        for n in range(count):
            name = f"w{n}-{secrets.token_hex(2)}"
            env = {**shared, "KAFKA_LAB_WORKER_NAME": name, "KAFKA_LAB_DATA_DIR": str(work_dir / f"labs-{n}"),
                   **(each[n] if each else {})}
            port = free_port()
            log_path = work_dir / f"daphne-{n}.log"
            with log_path.open("wb") as log:
                process = subprocess.Popen([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                                            "lab.asgi:application"], cwd=REPO_ROOT, env=env, stdout=log,
                                           stderr=subprocess.STDOUT)
            worker = Worker(name, f"http://127.0.0.1:{port}", process, log_path)
            workers.append(worker)
            wait_for_port(process, port, log_path, STARTUP_TIMEOUT_S)
            urllib.request.urlopen(worker.url + "/healthz", timeout=30).read()   # starts its heartbeat
        yield workers
    finally:
        for worker in workers:
            if worker.process.poll() is None:
                worker.process.terminate()
        for worker in workers:
            try:
                worker.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                worker.process.kill()
                worker.process.wait()
