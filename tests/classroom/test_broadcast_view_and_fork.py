"""A watcher's `view` of an earlier step and `fork` of the broadcast session: both leave the live
session alone, and both are exactly the session at that step (the engine is deterministic)."""
from __future__ import annotations

import shutil
import tempfile
import uuid
from typing import Any

import pytest

from lab.host import CommandRecord, SessionHost
from lab.models import LabCommand, LabSession
from lab.owners import user_key
from lab.registry import MODEL_RECORDS_BUDGET, build_host, journal_writer, registry, shape_of
from tests.classroom.broadcast_helpers import (
    account,
    broadcast,
    cookie_of,
    lab_path,
    lab_settings,  # noqa: F401 (autouse: a data dir per test)
    open_tab,
    run_async,
    watch_path,
)

pytestmark = pytest.mark.django_db(transaction=True)
TOPIC = {"topic": "t", "partitions": 2, "replication_factor": 3}


async def played(lab: Any) -> None:
    """A topic, records, a broker killed, and the clock moved on between them."""
    await lab.send(id=1, type="command", command="create_topic", args=TOPIC)
    await lab.until("ack")
    for _ in range(4):
        await lab.send(type="clock", action="step")
    await lab.send(id=2, type="command", command="produce", args={"topic": "t", "values": ["a", "b", "c", "d"]})
    await lab.until("ack")
    for _ in range(6):
        await lab.send(type="clock", action="step")
    await lab.send(id=3, type="command", command="kill_broker", args={"broker": 2})
    await lab.until("ack")
    for _ in range(5):
        await lab.send(type="clock", action="step")
    await lab.drain()


def fresh_replay(session_id: uuid.UUID, step: int) -> dict[str, Any]:
    """The session at `step`, replayed from its rows in the database by a host of the test's own."""
    journal_writer.flush()
    session = LabSession.objects.get(pk=session_id)
    records = [CommandRecord(c.index, c.at_step, c.at_time_ms, c.command, c.args, c.tag, c.error or None,
                             c.kafka_error or None, c.first_seq)
               for c in session.commands.filter(generation=session.generation, at_step__lte=step).order_by("index")]
    scratch = tempfile.mkdtemp(prefix="test-replay-")
    host = SessionHost(scratch, shape_of(session), log=records, position=(step, None), history=False,
                       checkpoints=False)
    try:
        return host.model(records_budget=MODEL_RECORDS_BUDGET)
    finally:
        host.close()
        shutil.rmtree(scratch, ignore_errors=True)


def test_a_view_of_step_n_is_the_model_a_fresh_replay_gives_and_leaves_the_session_alone() -> None:
    teacher = account("teacher", instructor=True)
    row = broadcast(teacher)
    teacher_cookie = cookie_of(teacher)

    async def scenario() -> dict[str, Any]:
        lab = await open_tab(lab_path(row), teacher_cookie)
        watcher = await open_tab(watch_path(row), None)
        await played(lab)
        await watcher.drain()
        live = registry.get(row.session_id)
        before = live.host.position()
        marks = [r.at_step for r in live.host.log]
        out: dict[str, Any] = {"before": before, "marks": marks, "views": {}}
        for step in (marks[0], marks[1], marks[1] + 3, before[0]):
            await watcher.send(id=step, type="view", step=step)
            out["views"][step] = await watcher.until("view")
        out["errors"] = []
        for i, bad in enumerate([before[0] + 1, -1, "3", None, True, 1.5]):
            await watcher.send(id=100 + i, type="view", step=bad)
            out["errors"].append(await watcher.until("error"))
        out["after"] = live.host.position()
        out["lab_saw"] = [m["type"] for m in await lab.drain()]
        await lab.close()
        await watcher.close()
        return out

    out = run_async(scenario)

    assert out["after"] == out["before"] and not {"events", "state", "hello"} & set(out["lab_saw"])
    for step, view in out["views"].items():
        assert view["id"] == step and view["step"] >= step and view["live_step"] == out["before"][0]
        assert view["model"] == fresh_replay(row.session_id, step), f"step {step}"
    first, last = out["views"][out["marks"][0]], out["views"][out["before"][0]]
    assert first["model"] != last["model"]
    assert {e["kafka_error"] for e in out["errors"]} == {"INVALID_REQUEST"}


def test_a_fork_is_the_broadcast_session_at_that_step_and_the_watchers_own() -> None:
    teacher, ann = account("teacher", instructor=True), account("ann")
    row = broadcast(teacher)
    teacher_cookie, ann_cookie = cookie_of(teacher), cookie_of(ann)

    async def scenario() -> dict[str, Any]:
        lab = await open_tab(lab_path(row), teacher_cookie)
        watcher = await open_tab(watch_path(row), ann_cookie)
        await played(lab)
        await watcher.drain()
        live = registry.get(row.session_id)
        out: dict[str, Any] = {"position": live.host.position(), "snapshot": live.host.snapshot()}
        await watcher.send(id=1, type="fork")
        out["now"] = await watcher.until("forked")
        middle = live.host.log[1].at_step + 2
        await watcher.send(id=2, type="fork", step=middle)
        out["middle"] = await watcher.until("forked")
        out["middle_step"] = middle
        anonymous = await open_tab(watch_path(row), None)
        await anonymous.send(id=3, type="fork")
        out["refused"] = await anonymous.until("error")
        # The broadcast session at `middle`, by the instructor's own rewind, to compare with.
        await lab.send(type="clock", action="rewind", to=middle)
        await lab.until("state")
        out["rewound"] = live.host.snapshot()
        for tab in (lab, watcher, anonymous):
            await tab.close()
        return out

    out = run_async(scenario)

    assert out["refused"]["kafka_error"] == "INVALID_REQUEST"
    for key, snapshot in (("now", out["snapshot"]), ("middle", out["rewound"])):
        fork_id = uuid.UUID(out[key]["session_id"])
        fork = LabSession.objects.get(pk=fork_id)
        assert fork.owner == user_key(ann) and out[key]["url"] == f"/lab/{fork_id}/"
        host, _ = build_host(fork_id)
        try:
            assert host.snapshot() == snapshot, key
        finally:
            host.close()
    assert LabSession.objects.get(pk=out["middle"]["session_id"]).position_step == out["middle_step"]
    assert LabCommand.objects.filter(session_id=out["now"]["session_id"]).count() == 3
    assert LabCommand.objects.filter(session_id=row.session_id).count() == 3   # the broadcast's log untouched
