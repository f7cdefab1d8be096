"""A lesson's socket (ws/lessons/<slug>/<uuid>/) reaching a worker that does not host its session
is tunnelled like a lab tab: the lesson's own messages work on either worker."""
from __future__ import annotations

import asyncio
import concurrent.futures
import re
from pathlib import Path
from typing import Any

from lab import local_services
from tests.deploy.cluster import running_workers
from tests.deploy.sockets import health, open_path
from tests.raw_websocket import Visitor

SLUG = "hw-truncation-story"


async def _lesson_on_two_workers(a_url: str, b_url: str) -> dict[str, Any]:
    visitor = Visitor(a_url)
    page = await asyncio.to_thread(lambda: visitor.opener.open(f"{a_url}/lessons/{SLUG}/").read().decode())
    path = re.search(r"/ws/lessons/[-\w]+/[0-9a-f-]{36}/", page).group(0)
    on_a = await open_path(a_url, path, visitor.cookie())
    await on_a.until("hello")
    on_b = await open_path(b_url, path, visitor.cookie())     # relayed to A
    await on_b.until("hello")
    on_b.send(type="lesson", id=7, action="state")
    while True:
        answer = await on_b.receive_json(60)
        if answer.get("id") == 7 and answer["type"] in ("lesson", "error"):
            break
    result = {"answer": answer, "a": health(a_url), "b": health(b_url)}
    on_a.close()
    on_b.close()
    return result


def test_a_lesson_socket_on_the_other_worker_is_served_by_the_sessions_worker(tmp_path: Path) -> None:
    database_url, redis_url = local_services.postgres_url(), local_services.redis_url()
    with running_workers(tmp_path, database_url, redis_url, count=2) as (a, b):
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            result = pool.submit(asyncio.run, _lesson_on_two_workers(a.url, b.url)).result()

    assert result["answer"]["type"] == "lesson", result["answer"]
    assert result["a"]["lab"]["sessions"] == 1 and result["b"]["lab"]["sessions"] == 0
    assert result["b"]["worker"]["relays"] == 1 and result["a"]["worker"]["remote_tabs"] == 1
