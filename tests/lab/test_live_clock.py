"""The live clock (lab.live_clock): every live session's clock moves in shared rounds, each
session's events reach its tabs in the engine's order, and one failing session stops alone."""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import uuid
from pathlib import Path
from typing import Any

import pytest

from lab.host import SessionHost, Shape
from lab.live_clock import live_clock
from lab.registry import LiveSession


class FakeTab:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []

    async def deliver(self, text: str) -> None:
        self.messages.append(json.loads(text))

    async def end(self, code: int) -> None:
        pass

    def seqs(self) -> list[int]:
        return [e["seq"] for m in self.messages if m["type"] in ("events", "ack") for e in m["events"]]


async def live_session(root: Path) -> tuple[LiveSession, FakeTab]:
    host = SessionHost(str(root), Shape(3, 7, "leader-epoch", {}))
    live = LiveSession(uuid.uuid4(), host, {})
    tab = FakeTab()
    await live.join(tab)
    await live.command("create_topic", {"topic": "t", "partitions": 2, "replication_factor": 3})
    return live, tab


def run(test: Any) -> Any:
    """asyncio.run in a worker thread: after Playwright's sync API (the e2e tests) the pytest
    thread has a running event loop of its own (see tests/lab/test_consumer.py)."""
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, test()).result()


def test_live_sessions_tick_together_and_a_paused_one_stops(tmp_path: Path) -> None:
    async def scenario() -> tuple[int, int, int, tuple[bool, bool]]:
        (a, _), (b, _) = await live_session(tmp_path / "a"), await live_session(tmp_path / "b")
        await a.call(a.host.play, 10)
        await b.call(b.host.play, 10)
        await asyncio.sleep(0.5)
        await a.call(a.host.pause)
        a_paused_at = a.host.now_ms
        await asyncio.sleep(0.5)
        result = a_paused_at, a.host.now_ms, b.host.now_ms, (a in live_clock, b in live_clock)
        await b.call(b.host.pause)
        await a.close()
        await b.close()
        return result
    a_paused_at, a_now, b_now, ticking = run(scenario)
    assert a_paused_at > 2000                 # ~0.5 s at 10×
    assert a_now == a_paused_at               # paused: no tick moved it on
    assert b_now > a_paused_at + 2000         # the other went on
    assert ticking == (False, True)


def test_commands_and_ticks_reach_the_tab_in_the_engines_order(tmp_path: Path) -> None:
    async def scenario() -> FakeTab:
        live, tab = await live_session(tmp_path / "s")
        await live.call(live.host.play, 5)
        for i in range(30):
            await live.command("produce", {"topic": "t", "value": f"v{i}", "acks": "all"})
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        await live.call(live.host.pause)
        await asyncio.sleep(0.1)
        await live.close()
        return tab
    tab = run(scenario)
    seqs = tab.seqs()
    assert len(seqs) > 100
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)


def test_a_failing_tick_pauses_its_session_and_tells_its_tabs_only(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    async def scenario() -> tuple[LiveSession, FakeTab, LiveSession, int]:
        (bad, bad_tab), (good, _) = await live_session(tmp_path / "bad"), await live_session(tmp_path / "good")
        real_tick = bad.host.tick

        def broken_tick(*args: Any) -> Any:
            real_tick(*args)
            raise RuntimeError("engine bug")
        monkeypatch.setattr(bad.host, "tick", broken_tick)
        await bad.call(bad.host.play, 10)
        await good.call(good.host.play, 10)
        await asyncio.sleep(0.5)
        good_then = good.host.now_ms
        await asyncio.sleep(0.3)
        moved = good.host.now_ms - good_then
        await good.call(good.host.pause)
        await bad.close()
        await good.close()
        return bad, bad_tab, good, moved
    bad, bad_tab, good, moved = run(scenario)
    errors = [m for m in bad_tab.messages if m["type"] == "error"]
    assert [e["kafka_error"] for e in errors] == ["UNKNOWN_SERVER_ERROR"]
    assert "live clock failed" in errors[0]["message"]
    assert bad.host.mode == "paused"
    assert moved > 1000  # the good one kept going at 10×
