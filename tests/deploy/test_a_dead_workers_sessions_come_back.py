"""Failover: the worker hosting a session is killed (SIGKILL, nothing flushed on the way out); a
socket relayed to it from another worker is closed with a code the page reconnects on, and the
reconnect rebuilds the session on a live worker by replay — the same state, every acknowledged
command in it (docs/placement.md)."""
from __future__ import annotations

import asyncio
import concurrent.futures
from pathlib import Path
from typing import Any

from lab import local_services
from lab.workers import CLOSE_MOVED
from tests.deploy.cluster import Worker, running_workers
from tests.deploy.sockets import closed_with, command, health, reconnect, snapshot
from tests.raw_websocket import RawTab, Visitor

COMMANDS = 12


async def _before_the_crash(a: Worker, b: Worker) -> dict[str, Any]:
    visitor = Visitor(a.url)
    session_id = await asyncio.to_thread(visitor.new_session, "failover", 3)
    tab_a = await RawTab.open(a.url, session_id, visitor.cookie())     # A hosts the session
    await tab_a.until("hello")
    tab_b = await RawTab.open(b.url, session_id, visitor.cookie())     # B relays to A
    await tab_b.until("hello")
    acks = [await command(tab_b, 1, "create_topic", {"topic": "t", "partitions": 3, "replication_factor": 3})]
    for n in range(COMMANDS):
        acks.append(await command(tab_b, 2 + n, "produce",
                                  {"topic": "t", "values": [f"v{n}-{i}" for i in range(5)], "acks": "all"}))
    state = await snapshot(tab_b)
    tab_a.close()
    return {"session_id": session_id, "cookie": visitor.cookie(), "tab_b": tab_b, "acks": acks, "state": state}


async def _after_the_crash(b: Worker, before: dict[str, Any]) -> dict[str, Any]:
    code = await closed_with(before["tab_b"], timeout=60)          # B's relay notices A's heartbeat stop
    tab, hello = await reconnect(b.url, before["session_id"], before["cookie"])   # the page's reconnect
    state = await snapshot(tab)
    # The rebuilt session takes commands again, on B.
    more = await command(tab, 99, "produce", {"topic": "t", "values": ["after"], "acks": "all"})
    tab.close()
    return {"code": code, "hello": hello, "state": state, "more": more, "b": health(b.url)}


def _run(coroutine: Any) -> Any:
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()


def test_a_killed_workers_session_is_rebuilt_on_another_with_every_acknowledged_command(tmp_path: Path) -> None:
    database_url, redis_url = local_services.postgres_url(), local_services.redis_url()
    with running_workers(tmp_path, database_url, redis_url, count=2) as (a, b):
        loop_owner = concurrent.futures.ThreadPoolExecutor(1)   # tab_b's event loop outlives the kill
        loop = asyncio.new_event_loop()
        try:
            before = loop_owner.submit(loop.run_until_complete, _before_the_crash(a, b)).result()
            a.kill()
            after = loop_owner.submit(loop.run_until_complete, _after_the_crash(b, before)).result()
        finally:
            loop_owner.submit(loop.close).result()
            loop_owner.shutdown()

    assert after["code"] == CLOSE_MOVED, f"B's relay closed the socket with {after['code']}; log:\n{b.log()[-3000:]}"
    # B now hosts it: rebuilt by replay from PostgreSQL.
    assert after["b"]["lab"]["sessions"] == 1, after["b"]
    # Every acknowledged command is in the rebuilt log, in order, at the index its ack gave.
    acked = [ack["command"]["index"] for ack in before["acks"]]
    marks = {mark["index"]: mark for mark in after["hello"]["timeline"]["marks"]}
    assert acked == sorted(acked) and set(acked) <= set(marks), (acked, sorted(marks))
    # The same state: the model the tab saw before the crash is the model after the replay.
    assert after["state"]["model"] == before["state"]["model"]
    assert (after["state"]["step"], after["state"]["time_ms"]) == (before["state"]["step"], before["state"]["time_ms"])
    assert after["more"]["command"]["index"] == acked[-1] + 1


async def _killed_right_after_an_ack(a: Worker, b: Worker) -> dict[str, Any]:
    visitor = Visitor(a.url)
    session_id = await asyncio.to_thread(visitor.new_session, "killed after an ack", 3)
    tab = await RawTab.open(a.url, session_id, visitor.cookie())
    await tab.until("hello")
    await command(tab, 1, "create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})
    last = await command(tab, 2, "produce", {"topic": "t", "values": ["acknowledged"], "acks": "all"})
    a.kill()   # at once: the journal writer's batch of the moment would die with the process
    tab.close()
    again, hello = await reconnect(b.url, session_id, visitor.cookie())
    again.close()
    return {"last": last, "hello": hello}


def test_a_command_acknowledged_just_before_the_kill_is_in_the_rebuilt_session(tmp_path: Path) -> None:
    database_url, redis_url = local_services.postgres_url(), local_services.redis_url()
    with running_workers(tmp_path, database_url, redis_url, count=2) as (a, b):
        result = _run(_killed_right_after_an_ack(a, b))

    index = result["last"]["command"]["index"]
    marks = [mark["index"] for mark in result["hello"]["timeline"]["marks"]]
    assert index in marks, f"command #{index} was acknowledged, then lost with its worker (log has {marks})"
