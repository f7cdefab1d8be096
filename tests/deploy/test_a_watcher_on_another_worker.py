"""A broadcast's watch link (ws/watch/<token>/) opened on a worker that does not host the
broadcast's session is tunnelled to the session's worker (via classroom.broadcast.session_for_token):
the watcher sees the instructor's frames."""
from __future__ import annotations

import asyncio
import concurrent.futures
import subprocess
import sys
from pathlib import Path
from typing import Any

from lab import local_services
from tests.deploy.cluster import running_workers, worker_env
from tests.deploy.sockets import command, health, open_path
from tests.raw_websocket import RawTab, Visitor
from tests.servers import REPO_ROOT

MAKE_BROADCAST = """
from django.contrib.auth import get_user_model
from classroom.models import Broadcast
teacher = get_user_model().objects.create_user("teacher", password="not-used-here-1")
print(Broadcast.objects.create(session_id="{session_id}", instructor=teacher, link_open=True).token)
"""


async def _watch_on_b(a_url: str, b_url: str, make_broadcast: Any) -> dict[str, Any]:
    visitor = Visitor(a_url)
    session_id = await asyncio.to_thread(visitor.new_session, "broadcast", 3)
    instructor = await RawTab.open(a_url, session_id, visitor.cookie())      # A hosts the session
    await instructor.until("hello")
    token = await asyncio.to_thread(make_broadcast, session_id)
    watcher = await open_path(b_url, f"/ws/watch/{token}/", "")             # an anonymous watcher, on B
    await watcher.until("hello")
    await command(instructor, 1, "create_topic", {"topic": "shown", "partitions": 1, "replication_factor": 3})
    while True:   # the watcher gets the instructor's frames, through B
        frame = await watcher.receive_json(60)
        if frame["type"] == "events" and "shown" in str(frame["events"]):
            break
    result = {"a": health(a_url), "b": health(b_url)}
    watcher.close()
    instructor.close()
    return result


def test_a_watcher_on_the_other_worker_sees_the_instructors_frames(tmp_path: Path) -> None:
    database_url, redis_url = local_services.postgres_url(), local_services.redis_url()

    def make_broadcast(session_id: str) -> str:
        done = subprocess.run([sys.executable, "manage.py", "shell", "-c", MAKE_BROADCAST.format(session_id=session_id)],
                              cwd=REPO_ROOT, env=worker_env(tmp_path, database_url, redis_url), check=True,
                              capture_output=True, text=True)
        return done.stdout.strip().splitlines()[-1]

    with running_workers(tmp_path, database_url, redis_url, count=2) as (a, b):
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            result = pool.submit(asyncio.run, _watch_on_b(a.url, b.url, make_broadcast)).result()

    assert result["a"]["lab"]["sessions"] == 1 and result["b"]["lab"]["sessions"] == 0, result
    assert result["b"]["worker"]["relays"] == 1, result["b"]
