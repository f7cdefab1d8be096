"""Two real Daphne workers on one PostgreSQL and one Redis: a lab session's engine lives in one of
them, and a socket that reaches the other is tunnelled to it (docs/placement.md)."""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from lab import local_services
from tests.deploy.cluster import running_workers
from tests.deploy.sockets import command, frames, health, snapshot
from tests.raw_websocket import RawTab, Visitor


async def _two_tabs_on_two_workers(a_url: str, b_url: str) -> dict[str, Any]:
    visitor = Visitor(a_url)
    session_id = await asyncio.to_thread(visitor.new_session, "placed", 3)
    tab_a = await RawTab.open(a_url, session_id, visitor.cookie())     # A claims the session first
    hello_a = await tab_a.until("hello")
    tab_b = await RawTab.open(b_url, session_id, visitor.cookie())     # B relays to A
    hello_b = await tab_b.until("hello")
    seen_b: list[dict[str, Any]] = []
    await command(tab_b, 1, "create_topic", {"topic": "t", "partitions": 2, "replication_factor": 3}, seen_b)
    await command(tab_b, 2, "produce", {"topic": "t", "values": ["a", "b", "c"], "acks": "all"}, seen_b)
    state_b = await snapshot(tab_b, seen_b)
    seen_a: list[dict[str, Any]] = []
    state_a = await snapshot(tab_a, seen_a)
    a_health, b_health = health(a_url), health(b_url)
    # An HTTP request that reads the engine (the model, a panel) is answered on either worker.
    models = [await asyncio.to_thread(_get_json, f"{url}/lab/{session_id}/model.json", visitor.cookie())
              for url in (a_url, b_url)]
    tab_a.close()
    tab_b.close()
    return {"hello_a": hello_a, "hello_b": hello_b, "seen_a": seen_a, "seen_b": seen_b, "state_a": state_a,
            "state_b": state_b, "a": a_health, "b": b_health,
            "models": models}


def _get_json(url: str, cookie: str) -> tuple[int, Any]:
    request = urllib.request.Request(url, headers={"Cookie": cookie})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")


def test_a_socket_on_another_worker_sees_the_same_frames_and_its_commands_run_on_the_owner(tmp_path: Path) -> None:
    database_url, redis_url = local_services.postgres_url(), local_services.redis_url()
    with running_workers(tmp_path, database_url, redis_url, count=2) as (a, b):
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            result = pool.submit(asyncio.run, _two_tabs_on_two_workers(a.url, b.url)).result()

    # One engine, on A: B holds no session in memory, only a relay; A serves B's tab remotely.
    assert result["a"]["lab"]["sessions"] == 1, result["a"]
    assert result["b"]["lab"]["sessions"] == 0, result["b"]
    assert result["a"]["worker"]["remote_tabs"] == 1 and result["b"]["worker"]["relays"] == 1, (result["a"], result["b"])
    assert result["a"]["worker"]["name"] == a.name and result["b"]["worker"]["name"] == b.name
    # The command B's tab sent ran on A: A's tab got its frames, the same ones B's tab got.
    after = result["hello_b"]["frame"]
    frames_b = frames(result["seen_b"], after)
    frames_a = frames(result["seen_a"], after)
    assert frames_b, "B's tab got no frame of its own commands"
    assert frames_a[:len(frames_b)] == frames_b
    topics = result["state_a"]["model"].get("topics")
    assert result["state_a"]["model"] == result["state_b"]["model"]
    assert result["state_a"]["frame"] == result["state_b"]["frame"]
    assert [t["topic"] for t in topics] == ["t"]
    # B has no engine for it, yet B's answer is A's: the request was relayed.
    (status_a, model_a), (status_b, model_b) = result["models"]
    assert (status_a, status_b) == (200, 200), result["models"]
    assert model_a == model_b and [t["topic"] for t in model_b["topics"]] == ["t"]
