"""Virtual time and the one queue of timed actions a cluster runs on.

The queue is a heap of `(time_ms, priority, sequence, action)`; the sequence number from a
counter makes actions due at the same time run in the order they were scheduled, so a run is
a pure function of the seed and the commands. `step()` runs exactly one action.

Each action is *foreground* (work that is under way: a request in flight, a pending election)
or *background* (a recurring timer: checkpoints, ISR expiry checks, an idle fetch long-poll).
`has_foreground_work()` lets the cluster decide when it has gone idle.
"""
from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

from engine.sim import budget as _budget

COMPACT_AT = 256  # cancelled entries in the heap before a sweep is considered


@dataclass(slots=True, eq=False)
class Scheduled:
    time_ms: int
    priority: int
    sequence: int
    action: Callable[[], None]
    label: str = ""
    foreground: bool = True
    cancelled: bool = False


def _done() -> None:
    """The action of an entry that ran or was cancelled."""


class Scheduler:
    def __init__(self) -> None:
        self.now_ms = 0
        # Heap entries are (time_ms, priority, sequence, Scheduled): tuples compare in C, and the
        # unique sequence settles every tie before the Scheduled is reached. (A heap of ordered
        # dataclasses spent a tenth of a busy cluster's time in their generated __lt__.)
        self._queue: list[tuple[int, int, int, Scheduled]] = []
        # A plain int, not itertools.count(): the scheduler is checkpointed with the rest of the
        # engine (engine.checkpoint), and pickling or copying itertools objects is deprecated
        # (Python 3.12) and goes away in 3.14.
        self._next_sequence = 0
        self.in_action = False  # True while an action runs (a checkpoint may not be taken then)
        self._foreground = 0
        self._cancelled_in_queue = 0
        self.steps = 0
        # A driver that runs blocking client calls (consumer.poll(), producer.flush(), a topic
        # creation waiting for its leaders, ...) one action at a time sets this. Called at the
        # start of every `step()`; when it returns True, the call's step was handed to the
        # driver, which runs the actions itself and resumes the call after each (lab/blocking.py).
        # Same actions, same order: a blocked call only re-checks its condition between them.
        self.yield_step: Callable[[], bool] | None = None

    def schedule(self, delay_ms: int, action: Callable[[], None], *, label: str = "",
                 priority: int = 0, foreground: bool = True) -> Scheduled:
        if delay_ms < 0:
            raise ValueError(f"cannot schedule in the past ({delay_ms} ms)")
        sequence = self._next_sequence
        self._next_sequence = sequence + 1
        entry = Scheduled(self.now_ms + int(delay_ms), priority, sequence, action, label, foreground)
        heapq.heappush(self._queue, (entry.time_ms, priority, entry.sequence, entry))
        if foreground:
            self._foreground += 1
        return entry

    def cancel(self, entry: Scheduled | None) -> None:
        if entry is not None and not entry.cancelled:
            entry.cancelled = True
            entry.action = _done  # see step()
            if entry.foreground:
                self._foreground -= 1
            # Cancelled entries stay in the heap until they reach its top. Request time-outs are
            # cancelled by nearly every answer and lie 30 s ahead, so a busy cluster's heap would
            # fill with dead timers (and their closures, which the GC walks again and again):
            # past half the heap, sweep them out. Pop order is unchanged — it is fixed by the
            # unique (time, priority, sequence) keys, not by the heap's layout.
            self._cancelled_in_queue += 1
            if self._cancelled_in_queue > COMPACT_AT and 2 * self._cancelled_in_queue > len(self._queue):
                self._queue = [e for e in self._queue if not e[3].cancelled]
                heapq.heapify(self._queue)
                self._cancelled_in_queue = 0

    def next_time(self) -> int | None:
        self._drop_cancelled()
        return self._queue[0][0] if self._queue else None

    def step(self) -> Scheduled | None:
        """Advance to the next action and run it; None if nothing is scheduled (or if `yield_step`
        took this step over: the driver ran it). Raises engine.sim.budget.BudgetExceeded, before
        anything moves, when the calling thread's budget has no room for this action."""
        if self.yield_step is not None and self.yield_step():
            return None
        self._drop_cancelled()
        if not self._queue:
            return None
        spending = _budget.current()
        if spending is not None:
            spending.charge(self._queue[0][0])
        entry = heapq.heappop(self._queue)[3]
        if entry.foreground:
            self._foreground -= 1
        entry.cancelled = True  # it ran; cancelling it later is a no-op
        self.now_ms = max(self.now_ms, entry.time_ms)
        self.steps += 1
        # Drop the action once it ran (or was cancelled): owners keep their timer entries (a
        # delayed fetch its expiry, a request its time-out) while the entry's action refers back
        # to the owner — a reference cycle per timer, which only the cyclic GC could free, in
        # pauses that grow with every live session of a server.
        action, entry.action = entry.action, _done
        outer, self.in_action = self.in_action, True
        try:
            action()
        finally:
            self.in_action = outer
        return entry

    def run(self, until_ms: int | None = None, stop: Callable[[], bool] | None = None, *,
            max_steps: int | None = None, advance: bool = True) -> bool:
        """Run actions in order until `stop()` holds, the next action lies past `until_ms`, nothing is
        scheduled, or `max_steps` actions ran. Returns True only if `stop()` ended the run.

        The one loop behind "run the scheduler until X or a deadline" (simpy's `run(until=)`):
        `stop` is asked before every action, so the run ends right after the action that made it
        true, with the clock at that action. When the run ends for want of actions at or before
        `until_ms` and `advance` holds, the clock moves on to `until_ms` (as run_for's tail does);
        a caller that waits for a state rather than for time passes advance=False.
        """
        ran = 0
        while True:
            if stop is not None and stop():
                return True
            if max_steps is not None and ran >= max_steps:
                return False
            nxt = self.next_time()
            if nxt is None or (until_ms is not None and nxt > until_ms):
                if advance and until_ms is not None:
                    self.advance_to(until_ms)
                return False
            self.step()
            ran += 1

    def advance_to(self, time_ms: int) -> None:
        """Move the clock forward with nothing due before `time_ms` (run_for's tail)."""
        self.now_ms = max(self.now_ms, time_ms)

    def has_foreground_work(self) -> bool:
        return self._foreground > 0

    def pending(self) -> int:
        return sum(1 for e in self._queue if not e[3].cancelled)

    def newest_pending(self, label: str) -> Scheduled | None:
        """The pending entry with this label scheduled last (None if none): a linear scan, for
        readers that explain the queue (engine.timers), never for the engine's own decisions."""
        found = None
        for entry in (e[3] for e in self._queue):
            if not entry.cancelled and entry.label == label and (found is None or entry.sequence > found.sequence):
                found = entry
        return found

    def _drop_cancelled(self) -> None:
        while self._queue and self._queue[0][3].cancelled:
            heapq.heappop(self._queue)
            self._cancelled_in_queue -= 1
