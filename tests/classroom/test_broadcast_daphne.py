"""A broadcast over real sockets, against a real Daphne (tests/raw_websocket.py): a watcher by
the link gets the instructor tab's frames byte for byte, is refused a command, and is closed with
a message when the instructor stops the broadcast from their watch socket."""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
from collections.abc import Iterator

import pytest

from tests.classroom.broadcast_server import broadcast_daphne, open_socket
from tests.raw_websocket import OP_CLOSE, RawTab


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, dict]]:
    with broadcast_daphne(tmp_path_factory.mktemp("broadcast-raw")) as server:
        yield server


async def texts_until_quiet(tab: RawTab, quiet_s: float = 1.0) -> list[str]:
    out = []
    while True:
        try:
            message = await tab.receive(timeout=quiet_s)
        except TimeoutError:
            return out
        out.append("<close>" if message.opcode == OP_CLOSE else message.data.decode())
        if message.opcode == OP_CLOSE:
            return out


def test_a_watcher_on_a_real_daphne_sees_the_instructors_frames_and_is_closed_at_the_end(served) -> None:
    base_url, made = served

    async def scenario() -> dict:
        lab = await open_socket(base_url, f"/ws/lab/{made['session']}/", made["cookie"])
        await lab.until("hello")
        watcher = await open_socket(base_url, f"/ws/watch/{made['token']}/")
        await watcher.until("hello")
        await texts_until_quiet(watcher, 0.5)
        lab.send(id=1, type="command", command="create_topic",
                 args={"topic": "t", "partitions": 1, "replication_factor": 3})
        lab.send(id=2, type="command", command="produce", args={"topic": "t", "values": ["a", "b"]})
        for _ in range(4):
            lab.send(type="clock", action="step")
        out = {"lab": await texts_until_quiet(lab), "watcher": await texts_until_quiet(watcher)}
        watcher.send(id=3, type="command", command="kill_broker", args={"broker": 1})
        out["refused"] = await watcher.until("error")
        panel = await open_socket(base_url, f"/ws/watch/{made['token']}/", made["cookie"])
        await panel.until("hello")
        panel.send(id=4, type="stop")
        out["end"] = await texts_until_quiet(watcher, 10)
        out["close_code"] = watcher.close_code
        for tab in (lab, watcher, panel):
            tab.close()
        return out

    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        out = pool.submit(asyncio.run, scenario()).result()

    def frames(texts: list[str]) -> list[str]:
        return [t for t in texts if t != "<close>" and json.loads(t)["type"] in ("events", "state")]

    assert len(frames(out["lab"])) >= 3 and frames(out["watcher"]) == frames(out["lab"])
    assert out["refused"]["kafka_error"] == "NOT_CONTROLLER" and out["refused"]["id"] == 3
    ended = [json.loads(t) for t in out["end"] if t != "<close>" and json.loads(t)["type"] == "error"]
    assert ended and ended[-1]["kafka_error"] == "BROADCAST_ENDED"
    assert out["end"][-1] == "<close>" and out["close_code"] == 4410
