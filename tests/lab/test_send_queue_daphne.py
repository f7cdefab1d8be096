"""Tabs that do not read their socket, watching a busy session, through a real Daphne (issue 11,
finding 5: five such tabs took the server from 98 MB to 847 MB in a minute).

What the server holds for each tab — queued in its TabQueue plus what Daphne's transport has not
sent — is read from /healthz?lab=1 (lab.send_queue.QUEUE_STATS), not from RSS.
"""
from __future__ import annotations

import asyncio
import concurrent.futures
import time
from pathlib import Path
from typing import Any

from tests.raw_websocket import OP_CLOSE, RawTab, Visitor, lab_stats
from tests.servers import running_daphne

LIMIT = 2 * 1024 * 1024
STALL_S = 6
BUSY_S = 14


class Driver:
    """A tab that reads everything and keeps its session busy (the learner at the keyboard)."""

    def __init__(self, tab: RawTab) -> None:
        self.tab = tab
        self.frames = 0
        self.closed: int | None = None
        self._acks: dict[int, asyncio.Future] = {}
        self._next = 0
        self._task = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        while True:
            message = await self.tab.receive(60)
            if message.opcode == OP_CLOSE:
                self.closed = self.tab.close_code
                return
            data = message.json()
            if data["type"] == "events":
                self.frames += 1
            waiter = self._acks.pop(data.get("id"), None) if data["type"] in ("ack", "error") else None
            if waiter is not None and not waiter.done():
                waiter.set_result(data)

    async def command(self, command: str, args: dict[str, Any]) -> dict[str, Any]:
        self._next += 1
        waiter = self._acks[self._next] = asyncio.get_running_loop().create_future()
        self.tab.send(type="command", id=self._next, command=command, args=args)
        return await asyncio.wait_for(waiter, 60)

    async def keep_busy(self, seconds: float) -> None:
        stop = time.monotonic() + seconds
        while time.monotonic() < stop:
            await self.command("produce", {"topic": "t", "values": ["x" * 100] * 200, "acks": 1})
            await asyncio.sleep(0.05)


async def _frames_after_resume(tab: RawTab, seconds: float) -> list[dict[str, Any]]:
    tab.resume()
    seen, stop = [], time.monotonic() + seconds
    while time.monotonic() < stop:
        try:
            message = await tab.receive(max(0.1, stop - time.monotonic()))
        except TimeoutError:
            break
        if message.opcode == OP_CLOSE:
            break
        data = message.json()
        if data["type"] in ("events", "state"):
            seen.append({"type": data["type"], "frame": data["frame"]})
    return seen


async def _scenario(base_url: str) -> dict[str, Any]:
    visitor = Visitor(base_url)
    session_id = await asyncio.to_thread(visitor.new_session, "busy")
    driver = Driver(await RawTab.open(base_url, session_id, visitor.cookie()))
    await driver.command("create_topic", {"topic": "t", "partitions": 6, "replication_factor": 3})
    driver.tab.send(type="clock", action="play", speed=10)
    stalled = []
    for _ in range(5):
        tab = await RawTab.open(base_url, session_id, visitor.cookie())
        await tab.until("hello")
        tab.pause()
        stalled.append(tab)
    slow = await RawTab.open(base_url, session_id, visitor.cookie())
    await slow.until("hello")
    slow.pause()

    busy = asyncio.ensure_future(driver.keep_busy(BUSY_S))
    samples = []
    started = time.monotonic()
    resumed: list[dict[str, Any]] = []
    while not busy.done():
        await asyncio.sleep(0.5)
        samples.append(await asyncio.to_thread(lab_stats, base_url))
        if not resumed and time.monotonic() - started > STALL_S / 2:
            resumed = await _frames_after_resume(slow, 2.0)
    await busy
    final = await asyncio.to_thread(lab_stats, base_url)
    driver.tab.send(type="clock", action="pause")
    for tab in [*stalled, slow, driver.tab]:
        tab.close()
    return {"samples": samples, "final": final, "resumed": resumed, "driver_frames": driver.frames,
            "driver_closed": driver.closed}


def test_a_tab_that_does_not_read_holds_a_bounded_queue_gets_a_state_and_is_closed(tmp_path: Path) -> None:
    with running_daphne(tmp_path, KAFKA_LAB_TAB_QUEUE_BYTES=str(LIMIT), KAFKA_LAB_TAB_STALL_S=str(STALL_S)) as url:
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            result = pool.submit(asyncio.run, _scenario(url)).result()

    final, samples = result["final"], result["samples"]
    # Every tab stayed under its limit, all along (the peak is taken at every message queued).
    assert final["tab_bytes_peak"] <= LIMIT, final
    assert max(s["tab_bytes_max"] for s in samples) <= LIMIT
    # The stream was busy enough to overflow them: the slow tabs were resynced, not fed a backlog...
    assert final["resyncs"] >= 1 and final["dropped"] > 0, final
    # ...and the five that never read again were closed (1013) once their sockets took nothing.
    assert final["closed_slow"] >= 5, final
    # The tab that paused, then read again, got a `state` where frames were left out: it never
    # sees an `events` frame after a gap (which would make the page ask for a snapshot itself).
    resumed = result["resumed"]
    trace = " ".join(f"{m['type'][0]}{m['frame']}" for m in resumed)
    assert any(m["type"] == "state" for m in resumed), trace
    for before, after in zip(resumed, resumed[1:]):
        assert after["type"] == "state" or after["frame"] <= before["frame"] + 1, trace
    # The learner's own tab kept its stream all along.
    assert result["driver_closed"] is None and result["driver_frames"] > 50
