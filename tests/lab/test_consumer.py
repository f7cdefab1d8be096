"""A browser tab talks to its lab session over the WebSocket (docs/lab-protocol.md).

The tests drive the real ASGI application (origin check, session middleware, routing) with
Channels' WebsocketCommunicator, in a worker thread with its own event loop (see stack-notes:
the pytest thread may already have one). A communicator that times out waiting kills the app,
so absence is checked with `receive_nothing`.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from channels.testing import WebsocketCommunicator
from django.contrib.sessions.backends.db import SessionStore
from pytest_django.fixtures import Settings

from lab.asgi import application
from lab.models import LabCommand, LabSession
from lab.registry import registry

pytestmark = pytest.mark.django_db(transaction=True)
WAIT_S = 10


@pytest.fixture(autouse=True)
def lab_settings(settings: Settings, tmp_path: Path) -> None:
    settings.KAFKA_LAB_DATA_DIR = tmp_path / "labs"
    settings.KAFKA_LAB_IDLE_HOST_TTL_S = 0


def run_async(test: Callable[[], Awaitable[Any]]) -> Any:
    async def body() -> Any:
        try:
            return await test()
        finally:
            await registry.close_all()
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, body()).result()


def visitor() -> str:
    store = SessionStore()
    store["lab_visitor"] = True
    store.save()
    return store.session_key


def lab_session(owner: str, **shape: Any) -> LabSession:
    return LabSession.objects.create(owner=owner, name="test lab", **{"brokers": 3, "seed": 3, **shape})


def tab(session_id: uuid.UUID, session_key: str | None) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://127.0.0.1")]
    if session_key:
        headers.append((b"cookie", f"sessionid={session_key}".encode()))
    return WebsocketCommunicator(application, f"/ws/lab/{session_id}/", headers=headers)


async def opened(session_id: uuid.UUID, session_key: str) -> tuple[WebsocketCommunicator, dict]:
    socket = tab(session_id, session_key)
    connected, _ = await socket.connect(timeout=WAIT_S)
    assert connected
    hello = await socket.receive_json_from(timeout=WAIT_S)
    return socket, hello


async def send(socket: WebsocketCommunicator, **fields: Any) -> None:
    await socket.send_json_to({"v": 2, **fields})


async def until(socket: WebsocketCommunicator, kind: str, *, limit: int = 500) -> tuple[dict, list[dict]]:
    """Messages up to the first of type `kind`: (that one, the ones before it)."""
    before = []
    for _ in range(limit):
        received = await socket.receive_json_from(timeout=WAIT_S)
        if received["type"] == kind:
            return received, before
        before.append(received)
    raise AssertionError(f"no {kind} message within {limit} messages")


async def until_event(socket: WebsocketCommunicator, kind: str, *, limit: int = 500) -> dict:
    """The first `events` frame holding an event of `kind`."""
    for _ in range(limit):
        frame, _ = await until(socket, "events")
        if any(e["kind"] == kind for e in frame["events"]):
            return frame
    raise AssertionError(f"no {kind} event within {limit} frames")


async def drain(socket: WebsocketCommunicator, quiet_s: float = 0.3) -> list[dict]:
    out = []
    while not await socket.receive_nothing(timeout=quiet_s):
        out.append(await socket.receive_json_from(timeout=WAIT_S))
    return out


def test_it_says_hello_with_the_session_its_state_timeline_and_clock() -> None:
    key = visitor()
    session = lab_session(key, truncation="high-watermark")

    async def scenario() -> dict:
        socket, hello = await opened(session.id, key)
        await socket.disconnect()
        return hello

    hello = run_async(scenario)

    assert hello["v"] == 2 and hello["type"] == "hello" and hello["frame"] == 0
    assert hello["session"]["id"] == str(session.id)
    assert {k: hello["session"][k] for k in ("name", "brokers", "seed", "truncation")} == {
        "name": "test lab", "brokers": 3, "seed": 3, "truncation": "high-watermark"}
    assert [b["id"] for b in hello["model"]["brokers"]] == [1, 2, 3]
    assert hello["model"]["step"] == hello["timeline"]["steps"] > 0
    assert hello["timeline"]["marks"] == [] and hello["timeline"]["future"] == 0
    assert hello["clock"] == {"mode": "paused", "speed": 1.0, "scenario": None, "running": []}
    assert hello["history"]["next_seq"] == hello["model"]["seq"]


def test_a_command_is_acked_with_its_events_and_every_tab_sees_them() -> None:
    key = visitor()
    session = lab_session(key)

    async def scenario() -> tuple[dict, dict, dict, dict]:
        first, _ = await opened(session.id, key)
        second, _ = await opened(session.id, key)
        await send(first, type="command", id=7, command="create_topic",
                   args={"topic": "t", "partitions": 1, "replication_factor": 3})
        ack, _ = await until(first, "ack")
        events, _ = await until(second, "events")
        timeline, _ = await until(second, "timeline")
        await send(first, type="clock", action="step_until", kind="checkpoint_written")
        stepped = await until_event(first, "checkpoint_written")
        await first.disconnect()
        await second.disconnect()
        return ack, events, timeline, stepped

    ack, events, timeline, stepped = run_async(scenario)

    assert ack["id"] == 7 and ack["command"]["index"] == 0 and not ack["command"].get("running")
    kinds = [e["kind"] for e in events["events"]]
    assert "topic_created" in kinds and "leader_elected" in kinds
    assert events["events"][0]["seq"] == ack["command"]["first_seq"]
    assert events["coalesced"] == 0 and events["step"] > 0 and events["frame"] == 1
    assert events["patches"] and "t-0" in events["patches"][-1]["partitions"]
    assert [m["command"] for m in timeline["marks"]] == [
        {"create_topic": {"topic": "t", "partitions": 1, "replication_factor": 3}}]
    assert stepped["events"][-1]["kind"] == "checkpoint_written"
    assert LabCommand.objects.get().at_step == timeline["marks"][0]["step"]


def test_a_failing_command_answers_an_error_and_the_session_goes_on() -> None:
    key = visitor()
    session = lab_session(key)

    async def scenario() -> tuple[dict, dict]:
        socket, _ = await opened(session.id, key)
        await send(socket, type="command", id="a", command="kill_broker", args={"broker": 5})
        error, _ = await until(socket, "error")
        await send(socket, type="command", id="b", command="kill_broker", args={"broker": 2})
        ack, _ = await until(socket, "ack")
        await socket.disconnect()
        return error, ack

    error, ack = run_async(scenario)

    assert error == {"v": 2, "type": "error", "id": "a", "message": "There is no broker 5 (brokers: [1, 2, 3])",
                     "kafka_error": "BROKER_NOT_AVAILABLE"}
    assert ack["id"] == "b" and ack["command"]["command"] == {"kill_broker": {"broker": 2}}


def test_bad_frames_get_errors_and_the_socket_stays_usable() -> None:
    key = visitor()
    session = lab_session(key)
    bad_frames = [
        "this is not json",
        json.dumps([1, 2, 3]),
        json.dumps({"type": "snapshot"}),
        json.dumps({"v": 1, "type": "snapshot"}),
        json.dumps({"v": 2, "type": "teleport"}),
        json.dumps({"v": 2, "type": "clock", "action": "fast-forward"}),
        json.dumps({"v": 2, "type": "clock", "action": "rewind", "to": "yesterday"}),
        json.dumps({"v": 2, "type": "clock", "action": "speed", "speed": 50}),
        json.dumps({"v": 2, "type": "command", "id": 1, "args": {}}),
        json.dumps({"v": 2, "type": "command", "id": 2, "command": "run", "args": {"ms": 5}}),
        json.dumps({"v": 2, "type": "load_scenario", "scenario": "/etc/passwd"}),
        json.dumps({"v": 2, "type": "command", "id": 3, "command": "produce", "args": {"value": "x" * 70_000}}),
        '{"v": 2, "type": "command", "id": 4, "command": "kill_broker", "args": {"broker": NaN}}',
        json.dumps({"v": 2, "type": "clock", "action": "rewind", "to": 10**15}),
        json.dumps({"v": 2, "type": "history", "limit": 0}),
        json.dumps({"v": 2, "type": "undo"}),
    ]

    async def scenario() -> tuple[list[dict], dict, dict]:
        socket, _ = await opened(session.id, key)
        errors = []
        for frame in bad_frames:
            await socket.send_to(text_data=frame)
            errors.append(await socket.receive_json_from(timeout=WAIT_S))
        await socket.send_to(bytes_data=b"\x00\x01")
        binary = await socket.receive_json_from(timeout=WAIT_S)
        await send(socket, type="snapshot")
        state = await socket.receive_json_from(timeout=WAIT_S)
        await socket.disconnect()
        return errors, binary, state

    errors, binary, state = run_async(scenario)

    assert [e["type"] for e in errors] == ["error"] * len(bad_frames)
    messages = [e["message"] for e in errors]
    assert messages[0].startswith("Not valid JSON")
    assert "JSON object" in messages[1]
    assert "Unsupported protocol version None" in messages[2] and "version 1" in messages[3]
    assert messages[4].startswith("Unknown message type 'teleport'")
    assert messages[5].startswith("Unknown clock action 'fast-forward'")
    assert "'to' must be a number" in messages[6]
    assert "speed must be between 0.1 and 10.0" in messages[7]
    assert "needs a 'command' field" in messages[8] and errors[8]["id"] == 1
    assert "moves time" in messages[9] and errors[9]["id"] == 2
    assert "No built-in scenario '/etc/passwd'" in messages[10]
    assert messages[11] == "A message may be at most 64 KiB"
    assert "NaN is not a number JSON allows" in messages[12]
    assert "beyond this line of time" in messages[13]
    assert "'limit' must be a whole number from 1" in messages[14]
    assert "nothing to undo" in messages[15]
    assert binary["message"] == "Send JSON text frames, not binary ones"
    assert state["type"] == "state" and state["model"]["brokers"] and state["frame"] == 0


def test_it_refuses_a_session_the_visitor_does_not_own() -> None:
    owner, stranger = visitor(), visitor()
    session = lab_session(owner)

    async def attempt(session_id: uuid.UUID, key: str | None) -> dict:
        socket = tab(session_id, key)
        connected, _ = await socket.connect(timeout=WAIT_S)
        assert connected
        closed = await socket.receive_output(timeout=WAIT_S)
        await socket.disconnect()
        return closed

    closes = [run_async(lambda: attempt(session.id, stranger)),
              run_async(lambda: attempt(session.id, None)),
              run_async(lambda: attempt(uuid.uuid4(), owner))]

    assert closes == [{"type": "websocket.close", "code": 4403}] * 3
    assert len(registry) == 0


def test_frames_are_numbered_bounded_and_always_carry_the_model(settings: Settings) -> None:
    """However many events, every frame is under the size Daphne will send, the frames are numbered
    without a gap, and their patches keep the model exact (events only animate)."""
    settings.KAFKA_LAB_MAX_EVENTS_PER_FRAME = 20
    key = visitor()
    session = lab_session(key)

    async def scenario() -> tuple[dict, list[dict], list[int]]:
        socket, hello = await opened(session.id, key)
        await send(socket, type="command", id=1, command="create_topic",
                   args={"topic": "t", "partitions": 4, "replication_factor": 3})
        await until(socket, "ack")
        await send(socket, type="command", id=2, command="produce",
                   args={"topic": "t", "values": [f"v{i}" for i in range(40)]})
        await send(socket, type="clock", action="play", speed=10)
        await asyncio.sleep(1.0)
        await send(socket, type="clock", action="pause")
        received = []
        while not await socket.receive_nothing(timeout=0.3):
            received.append(await socket.receive_output(timeout=WAIT_S))
        await socket.disconnect()
        sizes = [len(m["text"]) for m in received if "text" in m]
        return hello, [json.loads(m["text"]) for m in received if "text" in m], sizes

    hello, messages, sizes = run_async(scenario)

    frames = [m for m in messages if m["type"] in ("events", "state")]
    assert [f["frame"] for f in frames] == list(range(hello["frame"] + 1, hello["frame"] + 1 + len(frames)))
    assert all(len(f["events"]) <= 20 for f in frames if f["type"] == "events")
    assert any(f["coalesced"] > 0 for f in frames if f["type"] == "events")
    assert max(sizes) < 1024 * 1024
    assert len(frames) <= 4 + 1.5 * 20  # about 20 a second, plus the frames of the commands
    seqs = [e["seq"] for f in frames if f["type"] == "events" for e in f["events"]]
    assert seqs == sorted(seqs)  # newest kept, in order
    last = frames[-1]
    assert last["step"] == max(f["step"] for f in frames)


def test_the_clock_plays_pauses_and_rewinds_for_every_tab() -> None:
    key = visitor()
    session = lab_session(key)

    async def scenario() -> tuple[list[dict], dict, dict]:
        socket, hello = await opened(session.id, key)
        start = hello["model"]["step"]
        await send(socket, type="clock", action="play", speed=10)
        playing, _ = await until(socket, "clock")
        await asyncio.sleep(0.8)
        await send(socket, type="clock", action="pause")
        paused, _ = await until(socket, "clock")
        await send(socket, type="snapshot")
        after_play, _ = await until(socket, "state")
        await send(socket, type="clock", action="rewind", to=start + 1)
        state, _ = await until(socket, "state")
        await socket.disconnect()
        return [playing, paused], after_play, state

    clocks, after_play, state = run_async(scenario)

    assert [(c["mode"], c["speed"]) for c in clocks] == [("live", 10.0), ("paused", 10.0)]
    assert 5000 < after_play["time_ms"] < 20000  # about 0.8 s × 10 of virtual time: timers have fired
    assert state["step"] == state["model"]["step"] < after_play["step"]
    assert LabSession.objects.get().position_step == state["step"]  # saved when the last tab left


def test_a_built_in_scenario_loads_and_steps_through() -> None:
    key = visitor()
    session = lab_session(key)

    async def scenario() -> tuple[dict, list[dict]]:
        socket, _ = await opened(session.id, key)
        await send(socket, type="load_scenario", scenario="hw-truncation-story")
        hello, _ = await until(socket, "hello")
        seen = []
        for _ in range(18):
            await send(socket, type="clock", action="step")
        seen = await drain(socket, quiet_s=0.5)
        await socket.disconnect()
        return hello, seen

    hello, seen = run_async(scenario)

    assert hello["session"]["truncation"] == "high-watermark" and hello["session"]["generation"] == 2
    scenario = hello["clock"]["scenario"]
    assert (scenario["name"], scenario["steps"], scenario["next_step"], scenario["done"]) == \
        ("hw-truncation-story", 18, 0, False)
    assert [m for m in seen if m["type"] == "error"] == []
    clocks = [m for m in seen if m["type"] == "clock"]
    assert clocks[-1]["mode"] == "paused" and clocks[-1]["scenario"]["done"]
    assert clocks[-1]["scenario"]["last_note"]  # the story's last note, for the page to show
    assert LabCommand.objects.filter(generation=2).count() == 11  # the scenario's 11 commands, logged
    session.refresh_from_db()
    assert session.history[0]["truncation"] == "leader-epoch"


def test_reset_over_the_socket_says_hello_again() -> None:
    key = visitor()
    session = lab_session(key)

    async def scenario() -> dict:
        socket, _ = await opened(session.id, key)
        await send(socket, type="command", id=1, command="create_topic", args={"topic": "t"})
        await until(socket, "ack")
        await send(socket, type="reset", brokers=5, seed=9, truncation="leader-epoch")
        hello, _ = await until(socket, "hello")
        await send(socket, type="reset", brokers=10)
        error, _ = await until(socket, "error")
        await socket.disconnect()
        return hello, error

    hello, error = run_async(scenario)

    assert hello["session"]["brokers"] == 5 and hello["session"]["seed"] == 9
    assert len(hello["model"]["brokers"]) == 5 and hello["model"]["topics"] == []
    assert "1 to 9" in error["message"] and "not 10" in error["message"]  # the shape check words it


def test_a_session_reopened_after_its_host_was_dropped_resumes_where_it_was() -> None:
    key = visitor()
    session = lab_session(key)

    async def scenario() -> tuple[dict, dict]:
        first, _ = await opened(session.id, key)
        await send(first, type="command", id=1, command="create_topic",
                   args={"topic": "t", "partitions": 2, "replication_factor": 3})
        await send(first, type="command", id=2, command="produce", args={"topic": "t", "values": ["a", "b"]})
        await send(first, type="clock", action="step_until", kind="high_watermark_advanced")
        await until_event(first, "high_watermark_advanced")
        await send(first, type="snapshot")
        before, _ = await until(first, "state")
        await first.disconnect()            # the last tab: the host is dropped (TTL 0 here)
        await asyncio.sleep(0.05)
        assert registry.get(session.id) is None
        second, hello = await opened(session.id, key)
        await second.disconnect()
        return before, hello

    before, hello = run_async(scenario)

    assert hello["model"] == before["model"]
    assert [m["command"] for m in hello["timeline"]["marks"]] == [
        {"create_topic": {"topic": "t", "partitions": 2, "replication_factor": 3}},
        {"produce": {"topic": "t", "values": ["a", "b"]}}]


def test_deleting_a_session_closes_its_tabs() -> None:
    from asgiref.sync import sync_to_async
    from django.test import Client

    key = visitor()
    session = lab_session(key)
    client = Client()
    client.cookies["sessionid"] = key

    async def scenario() -> tuple[int, dict]:
        socket, _ = await opened(session.id, key)
        response = await sync_to_async(client.post)(f"/lab/{session.id}/delete")
        closed = await socket.receive_output(timeout=WAIT_S)
        return response.status_code, closed

    status, closed = run_async(scenario)

    assert status == 302
    assert closed == {"type": "websocket.close", "code": 4404}
    assert not LabSession.objects.filter(pk=session.id).exists()


def test_a_reset_from_the_sessions_page_says_hello_to_open_tabs() -> None:
    from asgiref.sync import sync_to_async
    from django.test import Client

    key = visitor()
    session = lab_session(key)
    client = Client()
    client.cookies["sessionid"] = key

    async def scenario() -> tuple[int, dict]:
        socket, _ = await opened(session.id, key)
        response = await sync_to_async(client.post)(f"/lab/{session.id}/reset", {"brokers": 4})
        hello, _ = await until(socket, "hello")
        await socket.disconnect()
        return response.status_code, hello

    status, hello = run_async(scenario)

    assert status == 302
    assert hello["session"]["brokers"] == 4 and hello["session"]["generation"] == 2
    assert len(hello["model"]["brokers"]) == 4
    session.refresh_from_db()
    assert (session.generation, session.brokers) == (2, 4)


def test_a_scenario_stepped_to_its_end_reaches_the_tab_whole() -> None:
    """group-member-crashes' last steps (run 30 s, run 25 s) make frames of over a megabyte of
    events: Daphne refuses to send a message over 1 MiB, and the page stayed at generation 2.
    Every message stays under it, and the tab's model (hello + every patch) ends as the engine."""
    from tests.lab.test_model import apply_patch
    key = visitor()
    session = lab_session(key)

    async def scenario() -> tuple[dict, list[str], dict]:
        socket, _ = await opened(session.id, key)
        await send(socket, type="load_scenario", scenario="group-member-crashes")
        hello, _ = await until(socket, "hello")
        texts, state, seen_seq = [], None, -1
        for _ in range(13):
            await send(socket, type="clock", action="step")
        await send(socket, type="snapshot")
        # Every frame up to the snapshot's answer, then until the patches reach the snapshot's
        # event count: frames may be batched after it (no quiet-period guess, which load broke).
        while state is None or seen_seq < state["model"]["seq"]:
            text = (await socket.receive_output(timeout=WAIT_S))["text"]
            frame = json.loads(text)
            if frame["type"] == "state":
                state = frame
                continue
            texts.append(text)
            for patch in frame.get("patches", []):
                seen_seq = max(seen_seq, patch.get("seq", -1))
        await socket.disconnect()
        return hello, texts, state

    hello, texts, state = run_async(scenario)

    assert max(len(t.encode()) for t in texts) < 1024 * 1024
    model = hello["model"]
    for frame in map(json.loads, texts):
        if frame["type"] == "events":
            for patch in frame["patches"]:
                apply_patch(model, patch)
    group = model["groups"][0]
    assert (group["generation"], group["state"]) == (3, "Stable")
    assert [m["member"] for m in group["members"]] == ["c1"] and group["members"][0]["assignment"] == ["t-0", "t-1", "t-2"]
    assert model["groups"] == state["model"]["groups"]
    assert {n: p["high_watermark"] for n, p in model["partitions"].items()} == \
        {n: p["high_watermark"] for n, p in state["model"]["partitions"].items()}
