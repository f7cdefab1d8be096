"""A worker stopped with SIGTERM (a restart, an upgrade) deletes its heartbeat row on the way out,
so its sessions move at the next socket rather than after the heartbeat's silence."""
from __future__ import annotations

from pathlib import Path

import psycopg

from lab import local_services
from tests.deploy.cluster import running_workers


def _worker_names(database_url: str) -> list[str]:
    with psycopg.connect(database_url) as connection:
        return [row[0] for row in connection.execute("SELECT name FROM lab_labworker ORDER BY name")]


def test_a_worker_stopped_with_sigterm_deletes_its_row(tmp_path: Path) -> None:
    database_url, redis_url = local_services.postgres_url(), local_services.redis_url()
    with running_workers(tmp_path, database_url, redis_url, count=2) as (a, b):
        assert _worker_names(database_url) == sorted([a.name, b.name])
        a.process.terminate()
        a.process.wait(timeout=20)
        left = _worker_names(database_url)

    assert left == [b.name], a.log()[-2000:]
