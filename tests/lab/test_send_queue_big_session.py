"""Big sessions open (issue 11, finding 8: Daphne refuses to send a message over 1 MiB; a 9-broker,
64-partition session with 16,000 records had a 3 MB `hello`, so every page load dropped the
socket, and oversized `state`/`events` messages vanished silently).

Through a real Daphne: such a session's `hello` and `state` arrive, each under the limit. And a
message still over the limit (whatever made it) is logged and the tab resynced, never dropped
in silence.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from lab.registry import message, registry
from lab.send_queue import DAPHNE_MAX_MESSAGE_BYTES
from tests.lab.test_consumer import (
    lab_session,
    lab_settings,  # noqa: F401 - autouse: a temp data dir
    opened,
    run_async,
    until,
    visitor,
)
from tests.raw_websocket import OP_CLOSE, RawTab, Visitor
from tests.servers import running_daphne

RECORDS, PER_COMMAND = 16_000, 1000
VALUE = "v" * 48   # each command's 1,000 values make a 50 KB mark on the timeline


async def _command(tab: RawTab, number: int, command: str, args: dict[str, Any]) -> dict[str, Any]:
    tab.send(type="command", id=number, command=command, args=args)
    while True:
        answer = await tab.receive_json(120)
        if answer["type"] in ("ack", "error") and answer.get("id") == number:
            assert answer["type"] == "ack", answer
            return answer


async def _big_session(base_url: str) -> dict[str, Any]:
    visitor_ = Visitor(base_url)
    session_id = await asyncio.to_thread(visitor_.new_session, "big", 9)
    builder = await RawTab.open(base_url, session_id, visitor_.cookie(), rcvbuf=1 << 20)
    await builder.until("hello")
    await _command(builder, 1, "create_topic", {"topic": "t", "partitions": 64, "replication_factor": 3})
    for n in range(RECORDS // PER_COMMAND):
        await _command(builder, 2 + n, "produce", {"topic": "t", "values": [f"{n}-{i}-{VALUE}" for i in
                                                                            range(PER_COMMAND)], "acks": 1})
    builder.send(type="clock", action="play", speed=10)
    await asyncio.sleep(3)
    builder.send(type="clock", action="pause")
    await asyncio.sleep(0.5)
    builder.close()

    tab = await RawTab.open(base_url, session_id, visitor_.cookie(), rcvbuf=1 << 20)
    hello = await tab.receive(60)
    tab.send(type="snapshot")
    while True:
        state = await tab.receive(60)
        if state.opcode == OP_CLOSE or json.loads(state.data)["type"] == "state":
            break
    tab.close()
    return {"hello": hello, "state": state}


def test_a_nine_broker_64_partition_session_with_16000_records_opens(tmp_path: Path) -> None:
    with running_daphne(tmp_path, KAFKA_LAB_MAX_RECORDS_PER_S="1000000") as url:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            result = pool.submit(asyncio.run, _big_session(url)).result()

    hello, state = result["hello"], result["state"]
    assert hello.opcode != OP_CLOSE, "the page load dropped the socket"
    assert state.opcode != OP_CLOSE, "the snapshot dropped the socket"
    assert len(hello.data) < DAPHNE_MAX_MESSAGE_BYTES and len(state.data) < DAPHNE_MAX_MESSAGE_BYTES
    hello_json, state_json = hello.json(), state.json()
    assert hello_json["type"] == "hello" and state_json["type"] == "state"
    assert len(hello_json["model"]["brokers"]) == 9 and len(hello_json["model"]["partitions"]) >= 64
    produced = hello_json["model"]["produced_count"]
    assert produced == RECORDS == state_json["model"]["produced_count"]
    assert hello_json["timeline"]["marks"], "the timeline keeps its newest marks"


@pytest.mark.django_db(transaction=True)
def test_a_message_over_the_limit_is_logged_and_the_tab_resynced(caplog: pytest.LogCaptureFixture) -> None:
    key = visitor()
    session = lab_session(key)

    async def scenario() -> tuple[dict, list[dict]]:
        socket, _ = await opened(session.id, key)
        live = registry.get(session.id)
        live._post(json.dumps(message("clock", mode="paused", speed=1.0, scenario=None, running=[],
                                      padding="x" * DAPHNE_MAX_MESSAGE_BYTES)))
        live._wake_pump()
        state, before = await until(socket, "state")
        rest = []
        while not await socket.receive_nothing(timeout=0.3):
            rest.append(await socket.receive_json_from())
        await socket.disconnect()
        return state, before + rest

    with caplog.at_level(logging.ERROR, logger="lab.send_queue"):
        state, others = run_async(scenario)

    assert state["frame"] == 0 and state["model"]["brokers"]
    assert not any("padding" in m for m in others)
    assert [m["type"] for m in others if m["type"] in ("clock", "timeline")] == ["clock", "timeline"]
    assert any("over Daphne's" in r.getMessage() and "'clock'" in r.getMessage() for r in caplog.records)
