"""A budget for one call into the engine: how many scheduler actions it may run, how far virtual
time may go, and until when on the wall clock — checked by `Scheduler.step()` before each action.

The lab runs the engine for people it does not know: one call (a clock move, a command that waits
for leaders, a cluster's start-up, a rewind's replay) must never hold its thread for good, even
on legal input — a timer every millisecond, a consumer waiting ten minutes with every broker
dead. So the caller sets a budget for its thread (`spending`), and every action the scheduler
runs in that thread — in the caller's own loop or deep in the engine's (Cluster.run_until_idle,
create_topic waiting for its leaders) — is charged to it. When one more action would go over,
`step()` raises BudgetExceeded *before* it pops that action: the engine stops between two
actions, never inside one, so its state is one that a step-by-step run also passes through.

Blocked client calls running in threads of their own (lab.blocking) hand every action to the
driving thread, so their actions are charged to the driver's budget; they need none of their own.

BudgetExceeded is a BaseException, so that no `except Exception` in the engine swallows it (the
engine keeps a command's errors on its record; running out of budget is not the command's error).

Thread-local by design: a server runs many sessions at once, one call per worker thread.
`interrupt_all()` makes every budget run out at its next check (a server shutting down).
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

WALL_CHECK_EVERY = 16   # actions between two looks at the wall clock (a look costs ~50 ns; an action ~5 µs)


class BudgetExceeded(BaseException):
    """One more action would take the call over its budget; `budget` names which one
    ("wall", "virtual", "actions" or "shutdown"), `message` says it in words."""

    def __init__(self, budget: str, message: str) -> None:
        super().__init__(message)
        self.budget = budget
        self.message = message


@dataclass
class CallBudget:
    """What one call may spend. None: no bound of that kind. `virtual_until_ms` is absolute (the
    caller knows where its clock starts); the wall deadline is fixed when spending starts."""
    max_actions: int | None = None
    wall_ms: float | None = None
    virtual_until_ms: int | None = None
    what: str = "this call"                      # for the message: "step_until", "the rewind", ...
    clock: Callable[[], float] = time.monotonic
    actions: int = 0                             # spent so far
    deadline: float | None = field(default=None, repr=False)
    names: dict[str, str] = field(default_factory=dict)   # budget -> the setting that sets it (for the message)

    def start(self) -> CallBudget:
        self.actions = 0
        self.deadline = None if self.wall_ms is None else self.clock() + self.wall_ms / 1000
        return self

    def charge(self, next_time_ms: int) -> None:
        """Count one action due at `next_time_ms`; raise BudgetExceeded instead if it would go over."""
        self._check(next_time_ms, look_at_clock=self.actions % WALL_CHECK_EVERY == 0)
        self.actions += 1

    def check(self) -> None:
        """Raise BudgetExceeded if no further action could be charged now (the wall clock is looked
        at): for a driver about to start a unit of work it must not stop in the middle of."""
        self._check(None, look_at_clock=True)

    def _check(self, next_time_ms: int | None, look_at_clock: bool) -> None:
        if _interrupted.is_set():
            raise BudgetExceeded("shutdown", f"{self.what} stopped: the server is shutting down")
        if self.max_actions is not None and self.actions >= self.max_actions:
            raise BudgetExceeded("actions", f"{self.what} stopped after {self.actions} scheduler actions, "
                                            f"its budget{self._setting('actions')}")
        if self.virtual_until_ms is not None and next_time_ms is not None and next_time_ms > self.virtual_until_ms:
            raise BudgetExceeded("virtual", f"{self.what} stopped at virtual time {self.virtual_until_ms} ms: going "
                                            f"on would pass its virtual-time budget{self._setting('virtual')}")
        if self.deadline is not None and look_at_clock and self.clock() > self.deadline:
            assert self.wall_ms is not None   # start() sets a deadline from wall_ms only
            raise BudgetExceeded("wall", f"{self.what} stopped after {self.wall_ms / 1000:g} s of wall-clock time "
                                         f"({self.actions} scheduler actions), its wall-time "
                                         f"budget{self._setting('wall')}")

    def _setting(self, budget: str) -> str:
        name = self.names.get(budget)
        return f" ({name})" if name else ""


class _Local(threading.local):
    # A class attribute, so a thread that never set one reads None without a failed lookup
    # (getattr(local, name, None) costs ~0.4 µs that way: once per scheduler action).
    budget: CallBudget | None = None


_local = _Local()
_interrupted = threading.Event()


def current() -> CallBudget | None:
    """The budget the calling thread spends from (None: unbounded, as the scenario runner and the CLI run)."""
    return _local.budget


@contextmanager
def spending(budget: CallBudget | None) -> Iterator[CallBudget | None]:
    """Charge every scheduler action this thread runs inside the block to `budget` (started now).
    Nested blocks spend from the innermost budget; None lifts the bound inside the block."""
    if not _at_shutdown:
        _interrupt_at_shutdown()
    outer = current()
    _local.budget = budget.start() if budget is not None else None
    try:
        yield budget
    finally:
        _local.budget = outer


def check() -> None:
    """The calling thread's budget's `check()` (nothing when it has none)."""
    budget = current()
    if budget is not None:
        budget.check()


def interrupt_all() -> None:
    """Every budget runs out at its next check, for good (the process is shutting down)."""
    _interrupted.set()


def interrupted() -> bool:
    return _interrupted.is_set()


_at_shutdown: list[bool] = []


def _interrupt_at_shutdown() -> None:
    """When the interpreter shuts down (a server's SIGTERM), every budget runs out, so that calls
    under way end at their next action instead of holding the exit: Python joins the worker
    threads of asyncio.to_thread (concurrent.futures) before it exits, and a call that never ended
    kept the process alive for good. Threading's exit hooks run newest first and the thread
    pool's own (which joins the workers) is registered when its module is imported: import it
    first, so that ours runs before it."""
    import concurrent.futures.thread  # noqa: F401 - registers the pool's exit hook before ours
    _at_shutdown.append(True)
    try:
        threading._register_atexit(interrupt_all)  # type: ignore[attr-defined]  # private: what concurrent.futures uses
    except RuntimeError:   # already shutting down
        interrupt_all()
