"""A learner plays a lesson over the lesson page's socket (lessons/consumers.py).

The real ASGI application (routing, origin check, session cookie) through Channels'
WebsocketCommunicator, in a worker thread with its own loop, as tests/lab/test_consumer.py does;
the lesson page itself (GET) makes the visitor's progress row and lab session. The lesson is
lesson 13, the HW truncation story; every answer is compared with the engine's own state.
"""
from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.test import Client
from pytest_django.fixtures import Settings

from engine.inspect.cluster import cluster_state
from lab.asgi import application
from lab.registry import registry
from lessons.models import LessonProgress
from tests.lab.test_consumer import WAIT_S, drain, run_async, send, until

pytestmark = pytest.mark.django_db(transaction=True)
SLUG = "hw-truncation-story"


@pytest.fixture(autouse=True)
def lab_settings(settings: Settings, tmp_path: Path) -> None:
    settings.KAFKA_LAB_DATA_DIR = tmp_path / "labs"
    settings.KAFKA_LAB_IDLE_HOST_TTL_S = 0


def open_lesson() -> tuple[str, uuid.UUID]:
    client = Client()
    page = client.get(f"/lessons/{SLUG}/")
    assert page.status_code == 200
    key = client.cookies["sessionid"].value
    progress = LessonProgress.objects.get(owner=key, slug=SLUG)
    return key, progress.session_id


async def lesson_tab(session_id: uuid.UUID, key: str) -> WebsocketCommunicator:
    socket = WebsocketCommunicator(application, f"/ws/lessons/{SLUG}/{session_id}/",
                                   headers=[(b"origin", b"http://127.0.0.1"), (b"cookie", f"sessionid={key}".encode())])
    connected, _ = await socket.connect(timeout=WAIT_S)
    assert connected
    hello = await socket.receive_json_from(timeout=WAIT_S)
    assert hello["type"] == "hello"
    return socket


_ids = iter(range(1, 1_000_000))


async def lesson(socket: WebsocketCommunicator, action: str, **fields: Any) -> dict:
    request_id = next(_ids)
    await send(socket, type="lesson", id=request_id, action=action, **fields)
    for _ in range(2000):
        received = await socket.receive_json_from(timeout=WAIT_S)
        if received.get("id") == request_id and received["type"] in ("lesson", "error"):
            return received
    raise AssertionError(f"no answer to lesson {action}")


async def reveal(socket: WebsocketCommunicator, beat: int) -> dict:
    for _ in range(200):
        reply = await lesson(socket, "reveal", beat=beat)
        if reply.get("interrupted") != "playing":
            return reply
        await asyncio.sleep(0.1)
    raise AssertionError("the beat never finished playing")


def host_state(session_id: uuid.UUID) -> dict:
    return cluster_state(registry.get(session_id).host.cluster)


def test_a_wrong_answer_is_judged_by_the_engine_with_its_hint_and_evidence() -> None:
    key, session_id = open_lesson()

    async def play() -> tuple[dict, dict, dict, dict]:
        socket = await lesson_tab(session_id, key)
        state = await lesson(socket, "state")
        typed = await lesson(socket, "answer", beat=0, answer="four")
        answered = await lesson(socket, "answer", beat=0, answer="3", speed=10)
        revealed = await reveal(socket, 0)
        leo = next(p for p in host_state(session_id)["partitions"] if p["topic"] == "t")["replica_states"]["1"]
        await drain(socket)
        await socket.disconnect()
        return state, typed, answered, {**revealed, "leo": leo["log_end_offset"]}

    state, typed, answered, revealed = run_async(play)

    assert state["progress"]["beat"] == 0 and state["progress"]["phase"] == "ready"
    assert typed["answer_error"] == "number" and typed["progress"]["phase"] == "ready"
    assert answered["progress"]["phase"] == "playing"
    result = revealed["result"]
    assert result["engine"] == revealed["leo"] == 4
    assert result["first"] == 3 and result["right"] is False and result["hint"] == "last-offset"
    assert {"kind": "replica", "tp": "t-0", "broker": 1} in result["evidence"]
    stored = LessonProgress.objects.get(owner=key, slug=SLUG)
    assert stored.answers["three-copies"] == {"first": 3, "right": False, "engine": 4}
    assert stored.phase == "done" and stored.seen == ["three-copies"]


def test_the_learner_does_the_action_and_only_the_first_answer_counts() -> None:
    key, session_id = open_lesson()

    async def play() -> dict[str, Any]:
        socket = await lesson_tab(session_id, key)
        await lesson(socket, "state")
        await lesson(socket, "answer", beat=0, answer="4", speed=10)
        first = await reveal(socket, 0)
        await lesson(socket, "goto", beat=1)
        await lesson(socket, "answer", beat=1, answer="4", speed=10)
        await reveal(socket, 1)
        at_do = await lesson(socket, "goto", beat=2)
        before = await lesson(socket, "check", beat=2)
        await send(socket, type="command", id=99, command="kill_broker", args={"broker": 1})
        await until(socket, "ack")
        after = await lesson(socket, "check", beat=2)
        back = await lesson(socket, "goto", beat=0)
        again = await lesson(socket, "answer", beat=0, answer="5", speed=10)
        second = await reveal(socket, 0)
        await drain(socket)
        await socket.disconnect()
        return {"first": first, "at_do": at_do, "before": before, "after": after, "back": back, "again": again,
                "second": second}

    seen = run_async(play)

    assert seen["first"]["result"]["right"] is True
    assert seen["at_do"]["progress"]["beat"] == 2 and seen["at_do"]["progress"]["phase"] == "ready"
    assert seen["before"]["passed"] is False and seen["after"]["passed"] is True
    assert seen["after"]["progress"]["phase"] == "done"
    assert seen["back"]["progress"]["beat"] == 0 and seen["back"]["progress"]["phase"] == "ready"
    assert seen["second"]["result"]["first"] == 4 and seen["second"]["result"]["right"] is True
    stored = LessonProgress.objects.get(owner=key, slug=SLUG)
    assert stored.answers["three-copies"]["first"] == 4 and stored.answers["three-copies"]["right"] is True
    assert stored.answers["followers-stall"]["right"] is True


def test_a_beat_the_learner_made_impossible_offers_a_replay() -> None:
    key, session_id = open_lesson()

    async def play() -> tuple[dict, dict, dict]:
        socket = await lesson_tab(session_id, key)
        await lesson(socket, "state")
        await lesson(socket, "answer", beat=0, answer="4", speed=10)
        await reveal(socket, 0)
        await lesson(socket, "goto", beat=1)
        for broker in (1, 2, 3):       # the beat's produce and its wait for a follower cannot happen now
            await send(socket, type="command", id=100 + broker, command="kill_broker", args={"broker": broker})
            await until(socket, "ack")
        await lesson(socket, "answer", beat=1, answer="4", speed=10)
        broken = await reveal(socket, 1)
        replayed = await lesson(socket, "goto", beat=1)
        await lesson(socket, "answer", beat=1, answer="4", speed=10)
        fixed = await reveal(socket, 1)
        await drain(socket)
        await socket.disconnect()
        return broken, replayed, fixed

    broken, replayed, fixed = run_async(play)

    assert broken["interrupted"] == "interrupted"
    assert replayed["progress"]["phase"] == "ready"
    assert fixed["result"]["engine"] == 4 and fixed["result"]["right"] is True


def test_a_stale_beat_number_or_an_unknown_action_is_refused_and_nothing_runs() -> None:
    key, session_id = open_lesson()

    async def play() -> tuple[dict, dict, dict, dict]:
        socket = await lesson_tab(session_id, key)
        await lesson(socket, "state")
        stale = await lesson(socket, "answer", beat=3, answer="2")
        unknown = await lesson(socket, "teleport", beat=0)
        out_of_range = await lesson(socket, "goto", beat=99)
        bad_speed = await lesson(socket, "answer", beat=0, answer="4", speed=float("1e9"))
        await drain(socket)
        await socket.disconnect()
        return stale, unknown, out_of_range, bad_speed

    for reply in run_async(play):
        assert reply["type"] == "error"
    assert LessonProgress.objects.get(owner=key, slug=SLUG).phase == "ready"


def test_the_index_shows_the_learners_progress() -> None:
    client = Client()
    assert 'data-status="new"' in client.get("/lessons/").content.decode()
    client.get(f"/lessons/{SLUG}/")
    key = client.cookies["sessionid"].value
    LessonProgress.objects.filter(owner=key, slug=SLUG).update(finished=True, seen=["three-copies"])
    page = client.get("/lessons/").content.decode()
    assert f'data-lesson-card="{SLUG}"' in page
    card = page.split(f'data-lesson-card="{SLUG}"', 1)[1].split("</li>", 1)[0]
    assert 'data-status="finished"' in card
