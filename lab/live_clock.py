"""The live clocks of all the sessions this process serves, moved together: one asyncio task and
one worker-thread hop per round, whatever the number of live sessions.

A live session's clock must tick about once a frame interval (KAFKA_LAB_FRAME_INTERVAL_MS) while
something is due. When each session ticked in a thread hop of its own (`asyncio.to_thread` per
tick), the hops — a thread-pool submit, a worker waking, the GIL handed over and back, a callback
onto the event loop — cost a busy server several times the engine's own work for a session at 1×,
and thirty live sessions filled a core. A round here takes every session whose tick is due and
that is not in the middle of another call, ticks them one after the other in one worker thread
(each under its own lock, as any host call), then publishes each outcome on the event loop.

A round shares one frame interval's worth of work (TICK_WORK_SHARE of it) among the sessions it
ticks, at least MIN_SLICE_MS each, so no cluster can starve the others. A cluster whose slice ran
out before its clock caught up is ticked again in the next round, at once; one that still cannot
keep up runs slower than asked, as `SessionHost.tick(work_ms=…)` says.
"""
from __future__ import annotations

import asyncio
import logging
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from lab.registry import LiveSession, Outcome

logger = logging.getLogger(__name__)

TICK_WORK_SHARE = 0.8      # of a frame interval, the engine work a round may do (split among its sessions)
MIN_SLICE_MS = 5.0         # ...but at least this much for each session
MAX_TICK_INTERVAL_S = 1.0  # a live clock with nothing due still ticks this often


class LiveClock:
    def __init__(self) -> None:
        self._due: dict[LiveSession, float] = {}   # live session -> when its next tick is due (monotonic)
        self._task: asyncio.Task | None = None
        self._wake: asyncio.Event | None = None

    def __contains__(self, live: LiveSession) -> bool:
        return live in self._due

    def want(self, live: LiveSession) -> None:
        """`live` plays: tick it from now on (at once, if it was not ticking)."""
        if live not in self._due:
            self._due[live] = time.monotonic()
            self._ensure_running()

    def poke(self, live: LiveSession) -> None:
        """A call other than a tick ran on `live` (it caught the clock up itself, and may have made
        something due sooner): tick it again a frame interval after its last tick."""
        if live in self._due:
            self._due[live] = min(self._due[live], live.last_tick + live.frame_interval)
            self._ensure_running()

    def _ensure_running(self) -> None:
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._task.get_loop() is not loop:
            self._wake = asyncio.Event()
            self._task = loop.create_task(self._run())
        self._wake.set()

    async def _run(self) -> None:
        while True:
            for live in [s for s in self._due if not s.wants_clock()]:
                del self._due[live]
            if not self._due:
                return
            now = time.monotonic()
            due = [s for s, at in self._due.items() if at <= now and not s.busy()]
            if due:
                try:
                    await self._round(due)
                except Exception:  # noqa: BLE001 - the clock of every session hangs on this task
                    logger.exception("lab: a live-clock round failed")
                    await asyncio.sleep(MAX_TICK_INTERVAL_S)
            self._wake.clear()
            waiting = [at for s, at in self._due.items() if not s.busy()]  # a busy one pokes when done
            delay = (min(waiting) if waiting else now + MAX_TICK_INTERVAL_S) - time.monotonic()
            if delay > 0:
                try:
                    await asyncio.wait_for(self._wake.wait(), delay)
                except TimeoutError:
                    pass

    async def _round(self, due: list[LiveSession]) -> None:
        for live in due:
            await live.lock.acquire()  # free (checked above): taken without yielding to the loop
        slice_ms = max(MIN_SLICE_MS, min(s.frame_interval for s in due) * 1000 * TICK_WORK_SHARE / len(due))
        loop = asyncio.get_running_loop()
        started = time.monotonic()
        pending = set(due)

        def tick_all() -> None:
            """In the worker thread: tick each session in turn and hand its outcome back at once
            (a command waiting for that session need not wait for the whole round)."""
            for live in due:
                try:
                    outcome, failure = live.tick_in_thread(slice_ms), None
                except Exception as error:  # noqa: BLE001 - one failing must not stop the others
                    logger.exception("lab session %s: the live clock failed", live.session_id)
                    outcome, failure = None, error
                loop.call_soon_threadsafe(self._finish, live, outcome, failure, started, pending)
        try:
            await asyncio.to_thread(tick_all)
        finally:
            for live in pending:  # the thread died before handing these back
                live.lock.release()
            pending.clear()

    def _finish(self, live: LiveSession, outcome: Outcome | None, failure: BaseException | None, started: float,
                pending: set[LiveSession]) -> None:
        """On the event loop, in tick order: publish a session's tick, then let its next call in."""
        if live not in pending:
            return
        pending.discard(live)
        try:
            live.last_tick = started
            if failure is not None:
                self._due.pop(live, None)
                asyncio.ensure_future(live.clock_failed())
                return
            live.publish(outcome)
            if outcome.error is not None or not live.wants_clock():
                self._due.pop(live, None)  # closed under us, paused, or its last tab left
                return
            next_due_ms = outcome.result.next_due_ms
            wait = MAX_TICK_INTERVAL_S if next_due_ms is None else \
                min(max(next_due_ms / 1000, live.frame_interval), MAX_TICK_INTERVAL_S)
            # A session whose tick ran out of work budget is behind: it goes again in the next
            # round, at once (frames still leave at most once a frame interval; between rounds
            # the event loop runs, and every session in a round gets its slice).
            self._due[live] = time.monotonic() if outcome.result.behind else started + wait
            live.save_position_if_due()
        finally:
            live.lock.release()


live_clock = LiveClock()
