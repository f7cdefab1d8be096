"""A broadcast over its sockets (docs/lab-protocol.md, "Broadcast"): watchers see the instructor's
frames, cannot change the session unless handed the controls, and are closed when it ends."""
from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async

from classroom.models import Broadcast
from tests.classroom.broadcast_helpers import (
    account,
    broadcast,
    cohort_of,
    cookie_of,
    lab_path,
    lab_settings,  # noqa: F401 (autouse: a data dir per test)
    open_tab,
    run_async,
    watch_path,
)

pytestmark = pytest.mark.django_db(transaction=True)
TOPIC = {"topic": "t", "partitions": 2, "replication_factor": 3}


def model_frames(messages: list[dict], after: int) -> dict[int, dict]:
    return {m["frame"]: m for m in messages if m["type"] in ("events", "state") and m["frame"] > after}


def test_a_watchers_frames_are_the_instructors_tabs_frames() -> None:
    teacher = account("teacher", instructor=True)
    row = broadcast(teacher)
    teacher_cookie = cookie_of(teacher)

    async def scenario() -> tuple[list[dict], list[dict], int]:
        lab = await open_tab(lab_path(row), teacher_cookie)
        watcher = await open_tab(watch_path(row), None)
        await watcher.drain()
        await lab.send(type="command", id=1, command="create_topic", args=TOPIC)
        await lab.until("ack")
        await lab.send(type="command", id=2, command="produce", args={"topic": "t", "values": ["a", "b", "c"]})
        await lab.until("ack")
        for _ in range(5):
            await lab.send(type="clock", action="step")
        await lab.send(type="clock", action="speed", speed=2)
        await lab.drain(0.8)
        await watcher.drain(0.8)
        await lab.close()
        await watcher.close()
        return [json.loads(t) for t in lab.texts], [json.loads(t) for t in watcher.texts], 0

    seen_lab, seen_watcher, after = run_async(scenario)

    lab_frames, watcher_frames = model_frames(seen_lab, after), model_frames(seen_watcher, after)
    assert len(lab_frames) >= 3
    assert watcher_frames == lab_frames
    assert any(e["kind"] == "topic_created" for f in watcher_frames.values() for e in f.get("events", []))
    clocks = [m for m in seen_watcher if m["type"] == "clock"]
    assert clocks and clocks[-1] == [m for m in seen_lab if m["type"] == "clock"][-1]


def test_a_watcher_cannot_change_the_session() -> None:
    teacher = account("teacher", instructor=True)
    row = broadcast(teacher)

    async def scenario() -> list[dict]:
        watcher = await open_tab(watch_path(row), None)
        await watcher.drain()
        answers = []
        for i, request in enumerate([
                {"type": "command", "command": "create_topic", "args": TOPIC},
                {"type": "clock", "action": "play"}, {"type": "clock", "action": "step"},
                {"type": "load_scenario", "scenario": "kip101-data-loss"}, {"type": "reset"}, {"type": "undo"},
                {"type": "pointer", "target": {"kind": "broker", "broker": 1}},
                {"type": "controller", "user": None}, {"type": "stop"}]):
            await watcher.send(id=i, **request)
            answers.append(await watcher.until("error"))
        await watcher.close()
        return answers

    answers = run_async(scenario)

    assert [a["id"] for a in answers] == list(range(9))
    assert {a["kafka_error"] for a in answers} == {"NOT_CONTROLLER"}
    assert Broadcast.objects.get().live


def test_the_instructor_hands_the_controls_to_a_watcher_and_takes_them_back() -> None:
    teacher, ann = account("teacher", instructor=True), account("ann")
    row = broadcast(teacher, link_open=False, cohort=None)
    row.cohort = cohort_of(teacher, ann)
    row.save()
    teacher_cookie, ann_cookie = cookie_of(teacher), cookie_of(ann)

    async def scenario() -> dict[str, Any]:
        out: dict[str, Any] = {}
        panel = await open_tab(watch_path(row), teacher_cookie)
        learner = await open_tab(watch_path(row), ann_cookie)
        out["role_before"] = await learner.until("broadcast")
        watchers = await panel.until("watchers", where=lambda m: m["count"] == 1)
        out["watchers"] = watchers
        await learner.send(id=1, type="command", command="create_topic", args=TOPIC)
        out["refused"] = await learner.until("error")
        await panel.send(id=2, type="controller", user=ann.pk)
        await panel.until("ack")
        out["role_during"] = await learner.until("broadcast")
        await learner.send(id=3, type="command", command="create_topic", args=TOPIC)
        out["accepted"] = await learner.until("ack")
        lab = await open_tab(lab_path(row), ann_cookie)   # the lab page's socket admits the controller too
        await panel.send(id=4, type="controller", user=None)
        await panel.until("ack")
        out["role_after"] = await learner.until("broadcast")
        out["lab_closed"] = [m for m in await lab.drain() if m["type"] == "<closed>"]
        await learner.send(id=5, type="clock", action="step")
        out["refused_again"] = await learner.until("error")
        await panel.send(id=6, type="controller", user=999_999)
        out["not_watching"] = await panel.until("error")
        await learner.close()
        await panel.close()
        return out

    out = run_async(scenario)

    assert out["watchers"]["watchers"] == [{"user": ann.pk, "name": "ann", "controls": False}]
    assert out["role_before"]["role"] == "watcher" and out["role_before"]["instructor"] == "teacher"
    assert out["refused"]["kafka_error"] == "NOT_CONTROLLER"
    assert out["role_during"]["role"] == "controller" and out["role_during"]["controller"] == "ann"
    assert out["accepted"]["id"] == 3 and out["accepted"]["command"]["command"] == {"create_topic": TOPIC}
    assert out["role_after"]["role"] == "watcher" and out["role_after"]["controller"] is None
    assert out["lab_closed"] == [{"type": "<closed>", "code": 4403}]
    assert out["refused_again"]["kafka_error"] == "NOT_CONTROLLER"
    assert out["not_watching"]["kafka_error"] == "INVALID_REQUEST"
    assert Broadcast.objects.get().controller is None


def test_a_second_instructor_cannot_take_the_controls() -> None:
    teacher, other = account("teacher", instructor=True), account("other", instructor=True)
    row = broadcast(teacher, link_open=False)
    row.cohort = cohort_of(teacher)
    row.cohort.instructors.add(other)
    row.save()
    other_cookie = cookie_of(other)

    async def scenario() -> list[dict]:
        tab = await open_tab(watch_path(row), other_cookie)
        await tab.drain()
        await tab.send(id=1, type="controller", user=other.pk)
        first = await tab.until("error")
        await tab.send(id=2, type="command", command="create_topic", args=TOPIC)
        second = await tab.until("error")
        await tab.close()
        return [first, second]

    first, second = run_async(scenario)

    assert first["kafka_error"] == second["kafka_error"] == "NOT_CONTROLLER"
    assert "instructor who started this broadcast" in first["message"]


def test_a_wrong_or_ended_link_is_refused() -> None:
    teacher = account("teacher", instructor=True)
    row = broadcast(teacher)
    ended = broadcast(teacher)
    Broadcast.objects.filter(pk=ended.pk).update(ended="2026-01-01T00:00:00Z")

    async def scenario() -> list[list[dict]]:
        out = []
        for path in ("/ws/watch/not-a-token/", watch_path(ended), f"/ws/watch/{row.token[:-1]}/"):
            tab = await open_tab(path, None, hello=False)
            out.append(await tab.drain())
        return out

    for answers in run_async(scenario):
        assert answers[0]["type"] == "error" and answers[0]["kafka_error"] == "BROADCAST_NOT_FOUND"
        assert answers[-1] == {"type": "<closed>", "code": 4404}


def test_a_cohort_only_broadcast_admits_its_members_alone() -> None:
    teacher, ann, bob = account("teacher", instructor=True), account("ann"), account("bob")
    row = broadcast(teacher, link_open=False)
    row.cohort = cohort_of(teacher, ann)
    row.save()
    ann_cookie, bob_cookie = cookie_of(ann), cookie_of(bob)

    async def scenario() -> dict[str, list[dict]]:
        out = {}
        for who, cookie in (("anonymous", None), ("bob", bob_cookie), ("ann", ann_cookie)):
            tab = await open_tab(watch_path(row), cookie, hello=False)
            out[who] = await tab.drain()
            await tab.close()
        return out

    out = run_async(scenario)

    for refused in ("anonymous", "bob"):
        assert out[refused][0]["kafka_error"] == "NOT_A_MEMBER"
        assert out[refused][-1] == {"type": "<closed>", "code": 4403}
    assert out["ann"][0]["type"] == "hello" and out["ann"][1]["role"] == "watcher"


def test_stopping_the_broadcast_closes_its_watchers_with_a_message() -> None:
    teacher = account("teacher", instructor=True)
    row = broadcast(teacher)
    teacher_cookie = cookie_of(teacher)

    async def scenario() -> tuple[list[dict], list[dict]]:
        panel = await open_tab(watch_path(row), teacher_cookie)
        watcher = await open_tab(watch_path(row), None)
        await watcher.drain()
        await panel.send(id=1, type="stop")
        seen = await watcher.drain()
        refused = await open_tab(watch_path(row), None, hello=False)
        again = await refused.drain()
        return seen, again

    seen, again = run_async(scenario)

    assert seen[-2]["type"] == "error" and seen[-2]["kafka_error"] == "BROADCAST_ENDED"
    assert "ended" in seen[-2]["message"]
    assert seen[-1] == {"type": "<closed>", "code": 4410}
    assert again[-1] == {"type": "<closed>", "code": 4404}
    assert not Broadcast.objects.get().live


def test_the_pointer_reaches_every_watcher_and_a_bad_one_is_refused() -> None:
    teacher = account("teacher", instructor=True)
    row = broadcast(teacher)
    teacher_cookie = cookie_of(teacher)

    async def scenario() -> dict[str, Any]:
        lab = await open_tab(lab_path(row), teacher_cookie)
        watcher = await open_tab(watch_path(row), None)
        await lab.send(id=1, type="command", command="create_topic", args=TOPIC)
        await lab.until("ack")
        out: dict[str, Any] = {"errors": []}
        for i, target in enumerate([{"kind": "broker", "broker": 7}, {"kind": "replica", "topic": "t", "partition": 2,
                                    "broker": 1}, {"kind": "replica", "topic": "nope", "partition": 0, "broker": 1},
                                    {"kind": "event", "seq": 10**9}, {"kind": "event", "seq": -1},
                                    {"kind": "broker", "broker": True}, {"kind": "planet"}, "broker 1"]):
            await lab.send(id=10 + i, type="pointer", target=target)
            out["errors"].append(await lab.until("error"))
        await lab.send(id=2, type="pointer", target={"kind": "replica", "topic": "t", "partition": 1, "broker": 2,
                                                     "extra": "dropped"})
        out["replica"] = await watcher.until("pointer")
        late = await open_tab(watch_path(row), None)
        out["late"] = await late.until("pointer")
        await lab.send(id=3, type="pointer", target=None)
        out["cleared"] = await watcher.until("pointer")
        for tab in (lab, watcher, late):
            await tab.close()
        return out

    out = run_async(scenario)

    assert [e["kafka_error"] for e in out["errors"]] == ["INVALID_REQUEST"] * 8
    assert "no broker 7" in out["errors"][0]["message"]
    assert out["replica"]["target"] == {"kind": "replica", "topic": "t", "partition": 1, "broker": 2}
    assert out["late"]["target"] == out["replica"]["target"]
    assert out["cleared"]["target"] is None


def test_watchers_of_a_lessons_session_are_told_its_beat() -> None:
    from lessons import catalog
    from lessons.models import LessonProgress

    teacher = account("teacher", instructor=True)
    row = broadcast(teacher)
    lesson = catalog.lessons()[0]
    progress = LessonProgress.objects.create(owner=f"user:{teacher.pk}", slug=lesson.slug, session=row.session, beat=0)
    teacher_cookie = cookie_of(teacher)

    async def scenario() -> tuple[dict, dict]:
        lab = await open_tab(lab_path(row), teacher_cookie)
        watcher = await open_tab(watch_path(row), None)
        first = await watcher.until("lesson_beat")
        await database_sync_to_async(LessonProgress.objects.filter(pk=progress.pk).update)(beat=2)
        await lab.send(type="clock", action="speed", speed=3)
        second = await watcher.until("lesson_beat")
        await lab.close()
        await watcher.close()
        return first, second

    first, second = run_async(scenario)

    assert first["slug"] == lesson.slug and first["beat"] == 0 and first["beats"] == len(lesson.beats)
    assert first["title"] == lesson.title("en") and first["text"]
    assert second["beat"] == 2
