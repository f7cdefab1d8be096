"""What the multi-worker tests do over a socket: commands answered, frames gathered, snapshots."""
from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request
from typing import Any

from tests.raw_websocket import OP_CLOSE, RawTab


async def command(tab: RawTab, number: int, command: str, args: dict[str, Any],
                  seen: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """Send a command; its `ack` (anything else that arrives meanwhile goes to `seen`)."""
    tab.send(type="command", id=number, command=command, args=args)
    while True:
        answer = await tab.receive_json(60)
        if answer["type"] in ("ack", "error") and answer.get("id") == number:
            assert answer["type"] == "ack", answer
            return answer
        if seen is not None:
            seen.append(answer)


async def snapshot(tab: RawTab, seen: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """The session's `state` as this tab gets it when it asks."""
    tab.send(type="snapshot")
    while True:
        answer = await tab.receive_json(60)
        if answer["type"] == "state":
            return answer
        if seen is not None:
            seen.append(answer)



async def closed_with(tab: RawTab, timeout: float) -> int | None:
    """Read until the server closes the socket; its close code."""
    while True:
        message = await tab.receive(timeout)
        if message.opcode == OP_CLOSE:
            return tab.close_code


def health(base_url: str) -> dict[str, Any]:
    try:
        with urllib.request.urlopen(base_url + "/healthz?lab=1", timeout=10) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        return json.loads(error.read())


def frames(messages: list[dict[str, Any]], after: int) -> list[tuple[int, str]]:
    """The model-changing messages after frame `after`: (frame number, the message as JSON)."""
    return [(m["frame"], json.dumps(m, sort_keys=True)) for m in messages
            if m["type"] in ("events", "state") and m.get("frame", 0) > after]


async def reconnect(base_url: str, session_id: str, cookie: str, attempts: int = 40) -> tuple[RawTab, dict[str, Any]]:
    """Open a socket as the page does after a close: a refused handshake (the session's worker died
    a moment ago, and nobody knows yet) is tried again, half a second later. The tab and its hello."""
    for attempt in range(attempts):
        try:
            tab = await RawTab.open(base_url, session_id, cookie)
            return tab, await tab.until("hello")
        except ConnectionError:
            if attempt == attempts - 1:
                raise
            await asyncio.sleep(0.5)
    raise AssertionError("unreachable")


async def open_path(base_url: str, path: str, cookie: str) -> RawTab:
    """A RawTab on any socket path: a lesson's, a watch link's."""
    return await RawTab.open(base_url, None, cookie, path=path)
