"""One visitor cannot lock the others out (issue 11, finding 7: one cookie opened 200 sessions in
~2 s; after that no other visitor's session loaded while the server evicted and rebuilt in a loop).

Sessions in memory are capped per visitor and for the server; eviction takes the longest idle
session that has no tab and is not being opened, and never loops: with none to evict, the load is
refused in words. A visitor's tabs share a command rate; a visitor creates so many sessions a minute.
"""
from __future__ import annotations

import asyncio
import time

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from lab.fairness import CLOSE_SERVER_FULL, CLOSE_VISITOR_FULL
from lab.registry import registry
from tests.lab.test_consumer import (
    WAIT_S,
    lab_session,
    lab_settings,  # noqa: F401 - autouse: a temp data dir, idle hosts dropped at once
    opened,
    run_async,
    send,
    tab,
    visitor,
)

pytestmark = pytest.mark.django_db(transaction=True)


async def refused(session_id, key: str) -> tuple[dict, int]:
    """Open a tab that the server refuses: (its error, the close code)."""
    socket = tab(session_id, key)
    connected, _ = await socket.connect(timeout=WAIT_S)
    assert connected
    error = await socket.receive_json_from(timeout=WAIT_S)
    closed = await socket.receive_output(timeout=WAIT_S)
    assert closed["type"] == "websocket.close", closed
    return error, closed["code"]


def test_a_visitor_at_their_cap_is_refused_and_another_visitor_still_gets_in(settings: Settings) -> None:
    settings.KAFKA_LAB_MAX_HOSTS = 4
    settings.KAFKA_LAB_MAX_HOSTS_PER_VISITOR = 2
    greedy, other = visitor(), visitor()
    greedy_sessions = [lab_session(greedy) for _ in range(3)]
    others = lab_session(other)

    async def scenario() -> tuple[tuple[dict, int], dict, float]:
        sockets = [(await opened(s.id, greedy))[0] for s in greedy_sessions[:2]]   # both watched: in use
        third = await refused(greedy_sessions[2].id, greedy)
        started = time.monotonic()
        socket, hello = await opened(others.id, other)
        waited = time.monotonic() - started
        for s in [*sockets, socket]:
            await s.disconnect()
        return third, hello, waited

    (error, code), hello, waited = run_async(scenario)

    assert code == CLOSE_VISITOR_FULL
    assert error["type"] == "error" and error["kafka_error"] == "THROTTLING_QUOTA_EXCEEDED"
    assert "2 lab sessions open" in error["message"] and "close the tab" in error["message"]
    assert hello["type"] == "hello" and waited < 5


def test_a_full_server_refuses_in_words_instead_of_evicting_in_a_loop(settings: Settings) -> None:
    settings.KAFKA_LAB_MAX_HOSTS = 2
    first, second = visitor(), visitor()
    watched = [lab_session(first), lab_session(second)]
    late = lab_session(second)

    async def scenario() -> tuple[tuple[dict, int], float, int]:
        sockets = [(await opened(watched[0].id, first))[0], (await opened(watched[1].id, second))[0]]
        started = time.monotonic()
        answer = await refused(late.id, second)
        waited = time.monotonic() - started
        held = len(registry)
        for s in sockets:
            await s.disconnect()
        return answer, waited, held

    (error, code), waited, held = run_async(scenario)

    assert code == CLOSE_SERVER_FULL and "The lab server is full" in error["message"]
    assert waited < 5 and held == 2   # refused at once; the sessions in use stayed


def test_eviction_takes_the_longest_idle_session_and_never_one_with_a_tab(settings: Settings) -> None:
    settings.KAFKA_LAB_MAX_HOSTS = 2
    settings.KAFKA_LAB_IDLE_HOST_TTL_S = 3600   # idle sessions stay until evicted
    key = visitor()
    oldest, newer, watched, fresh = (lab_session(key) for _ in range(4))

    async def scenario() -> list[set]:
        kept = []
        for session in (oldest, newer):
            socket, _ = await opened(session.id, key)
            await socket.disconnect()
            await asyncio.sleep(0.05)
        kept.append(_in_memory())
        socket, _ = await opened(watched.id, key)        # evicts `oldest`
        kept.append(_in_memory())
        other, _ = await opened(fresh.id, key)            # evicts `newer`, never `watched`
        kept.append(_in_memory())
        await socket.disconnect()
        await other.disconnect()
        return kept

    kept = run_async(scenario)

    assert kept == [{oldest.id, newer.id}, {newer.id, watched.id}, {watched.id, fresh.id}]


def _in_memory() -> set:
    return {sid for sid in list(registry._live) if not registry.get(sid).closed}


def test_a_visitors_tabs_share_a_command_rate_and_others_are_not_slowed(settings: Settings) -> None:
    settings.KAFKA_LAB_COMMANDS_PER_S_PER_VISITOR = 5
    busy, calm = visitor(), visitor()
    busy_sessions = [lab_session(busy), lab_session(busy)]
    calm_session = lab_session(calm)

    async def scenario() -> tuple[list[dict], list[dict]]:
        sockets = [(await opened(s.id, busy))[0] for s in busy_sessions]
        calm_socket, _ = await opened(calm_session.id, calm)
        for i in range(10):
            await send(sockets[i % 2], type="history", id=i, limit=1)
        await send(calm_socket, type="history", id=99, limit=1)
        answers = []
        for socket in sockets:
            while not await socket.receive_nothing(timeout=0.3):
                answers.append(await socket.receive_json_from(timeout=WAIT_S))
        calm_answer = [await calm_socket.receive_json_from(timeout=WAIT_S)]
        for socket in [*sockets, calm_socket]:
            await socket.disconnect()
        return answers, calm_answer

    answers, calm_answer = run_async(scenario)

    throttled = [a for a in answers if a["type"] == "error"]
    assert len([a for a in answers if a["type"] == "history"]) == 5   # the bucket holds one second's worth
    assert len(throttled) == 5 and all(a["kafka_error"] == "THROTTLING_QUOTA_EXCEEDED" for a in throttled)
    assert "at most 5 a second" in throttled[0]["message"]
    assert calm_answer[0]["type"] == "history" and calm_answer[0]["id"] == 99


def test_a_visitor_creates_at_most_so_many_sessions_a_minute(client: Client, settings: Settings) -> None:
    settings.KAFKA_LAB_SESSIONS_CREATED_PER_MIN = 3
    data = {"name": "my lab", "brokers": 3, "seed": 42, "truncation": "leader-epoch", "config": ""}

    statuses = [client.post("/lab/new", data).status_code for _ in range(4)]
    stranger = Client().post("/lab/new", data).status_code

    assert statuses == [302, 302, 302, 429] and stranger == 302
    answer = client.post("/lab/new", data)
    assert answer["Retry-After"] == "60" and "3 lab sessions in the last minute" in answer.content.decode()
