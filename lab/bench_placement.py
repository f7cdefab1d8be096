"""What placement costs a command: the time from sending a `command` to its `ack`, on two real
Daphne workers (PostgreSQL, Redis), for a tab on the session's own worker and for a tab tunnelled
from the other one, with and without durable acks (KAFKA_LAB_DURABLE_ACKS: the ack waits for the
journal's commit). Figures for docs/placement.md; never a test (figures are not assertions).

    .venv/bin/python -m lab.bench_placement [--commands 200]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from lab import local_services
from lab.serve import free_port, wait_for_port

REPO_ROOT = Path(__file__).resolve().parent.parent


@contextmanager
def _workers(durable: bool) -> Iterator[list[str]]:
    work = Path(tempfile.mkdtemp(prefix="bench-placement-"))
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    env.update(DJANGO_SETTINGS_MODULE="lab.settings", DATABASE_URL=local_services.postgres_url(),
               REDIS_URL=local_services.redis_url(), KAFKA_LAB_SECRET_KEY=secrets.token_urlsafe(50),
               KAFKA_LAB_DURABLE_ACKS="true" if durable else "false", KAFKA_LAB_MAX_RECORDS_PER_S="1000000")
    subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=REPO_ROOT, env=env,
                   check=True)
    processes, urls = [], []
    try:
        for n in range(2):
            port = free_port()
            log_path = work / f"daphne-{n}.log"
            with log_path.open("wb") as log:
                processes.append(subprocess.Popen(
                    [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "lab.asgi:application"],
                    cwd=REPO_ROOT, env={**env, "KAFKA_LAB_DATA_DIR": str(work / f"labs-{n}")}, stdout=log,
                    stderr=subprocess.STDOUT))
            wait_for_port(processes[-1], port, log_path)
            urls.append(f"http://127.0.0.1:{port}")
            urllib.request.urlopen(urls[-1] + "/healthz", timeout=30).read()
        yield urls
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=10)


async def _ack_times(owner_url: str, tab_url: str, commands: int) -> list[float]:
    from tests.raw_websocket import RawTab, Visitor  # the suite's raw client: no browser needed

    visitor = Visitor(owner_url)
    session_id = await asyncio.to_thread(visitor.new_session, "bench", 3)
    first = await RawTab.open(owner_url, session_id, visitor.cookie())   # the owner claims it
    await first.until("hello")
    tab = await RawTab.open(tab_url, session_id, visitor.cookie())
    await tab.until("hello")
    times = []
    for n in range(commands + 1):
        started = time.perf_counter()
        command = ("create_topic", {"topic": "t", "partitions": 3, "replication_factor": 3}) if n == 0 else \
            ("produce", {"topic": "t", "values": [f"v{n}"], "acks": 1})
        tab.send(type="command", id=n, command=command[0], args=command[1])
        while True:
            answer = await tab.receive_json(60)
            if answer["type"] in ("ack", "error") and answer.get("id") == n:
                break
        if n:
            times.append((time.perf_counter() - started) * 1000)
    tab.close()
    first.close()
    return times


def _summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"p50_ms": round(statistics.median(ordered), 1), "p95_ms": round(ordered[int(len(ordered) * 0.95)], 1),
            "max_ms": round(ordered[-1], 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commands", type=int, default=200)
    args = parser.parse_args()
    figures = {}
    for durable in (False, True):
        with _workers(durable) as (a, b):
            figures[f"durable={durable}, tab on the owner"] = _summary(asyncio.run(_ack_times(a, a, args.commands)))
            figures[f"durable={durable}, tab tunnelled"] = _summary(asyncio.run(_ack_times(a, b, args.commands)))
    print(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
