"""SessionHost: one lab session's cluster, its command log and its clock — the lab's time machine.

Plain Python over the engine (no Django): `lab.registry` builds one per lab session served by
this process and calls it from worker threads; every public method takes the host's lock and
returns what it caused (`Events`: the engine events, as objects and as JSON, and the model patch).

What it keeps true:
- **Replay = shape + command log.** Every command that reaches the engine is logged with the
  scheduler step and virtual time at which it was applied, and the event number it started at
  (`first_seq`). A failed one is logged too: it may have run the scheduler before failing, and
  replaying it fails the same way. Playing the log at those steps into a fresh cluster of the
  same shape gives the same events and bytes on disk: that is how a session is resumed after a
  restart and how it is rewound (from the nearest engine checkpoint, lab.checkpoints).
- **A position is (step, commands applied).** Several commands can be applied at one step (the
  clock paused), and an action's events share the step of the commands applied right after it.
  `rewind(to, after_seq)` lands exactly on the asked step, and — given an event number — just
  after that event, with the commands applied up to it and no further.
- **Commands that block run one action at a time** (lab.blocking): a consumer joining its group
  or polling is an application blocked in a client call; the call takes turns with the clock, so
  it can be paused, stepped and rewound into like anything else.
- **The future is never cut silently.** After a rewind, the logged commands ahead are the
  future: moving the clock forward re-applies them at their steps. A new command there cuts them
  off only when asked to (`discard_future=True`; else HostError FUTURE_EXISTS), and the cut can be
  undone (`undo_discard`) until the next cut.
- **A loaded scenario plays as `python -m engine.scenarios run` plays it.** Its commands are
  applied and logged like any other; its clock steps (`run`, `step`, `run_until_idle`,
  `run_until`) are played by the clock, action by action, and end exactly where the runner's do.
  Paused, `step` plays the next scenario step whole; live, the steps play at the clock's speed;
  after the last one the clock pauses.
- **Live time follows the wall clock.** Virtual time moves by the wall time since the last move
  × speed whenever the host is called; each move does bounded work: a busy cluster runs slower
  than asked rather than stalling the process.
- **The model.** `lab.model.ModelTracker` follows the cluster: `model()` is the whole picture,
  and every call returns the patch since the previous one (docs/lab-protocol.md).
"""
from __future__ import annotations

import copy
import os
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from typing import Any

from engine import events as ev
from engine.cluster import Cluster, ClusterError
from engine.replication.fetcher import TRUNCATION_MODES
from engine.scenarios.runner import STEPS, run_step, step_command
from engine.scenarios.schema import StepArgumentError, check_step
from engine.sim import budget as call_budget
from engine.sim.budget import BudgetExceeded, CallBudget
from engine.storage.errors import InvalidConfigError
from lab import snapshot as snap
from lab.blocking import BlockingCommands, RunningCommand, may_block
from lab.checkpoints import CheckpointStore
from lab.history import History
from lab.host_types import (
    _ACTED,
    _WAIT,
    ACTIONS_BUDGET_SETTING,
    BUDGET_EXCEEDED,
    CATCH_UP_WORK_MS,
    CHECKPOINT_CHECK_EVERY,
    CLOCK_STEPS,
    DISK_USAGE_TTL_S,
    ENGINE_ERRORS,
    MAX_EVENTS_PER_CALL,
    MAX_MARKS,
    MAX_SPEED,
    MIN_SPEED,
    STEP_UNTIL_MAX_MS,
    VIRTUAL_BUDGET_SETTING,
    WALL_BUDGET_SETTING,
    CallBudgets,
    CommandRecord,
    Events,
    HostError,
    Journal,
    Shape,
    _describe,
    _Withdrawn,
)
from lab.limits import LimitExceeded, Limits, RecordRate, check_command
from lab.model import ModelTracker
from lab.scenario_play import ScenarioPlayback, _describe_step, _ScriptStep, shape_of_scenario
from lab.series import Series
from lab.snapshot import event_json
from lab.time_travel import TimeTravel, _discard, _Discarded, _next_run_number

__all__ = ["CallBudgets", "CommandRecord", "Events", "HostError", "Journal", "SessionHost", "Shape",
           "shape_of_scenario"]


class SessionHost(ScenarioPlayback, TimeTravel):
    def __init__(self, root_dir: str, shape: Shape, *, limits: Limits | None = None,
                 journal: Journal | None = None, log: Iterable[CommandRecord] = (),
                 position: tuple[int, int] | None = None, max_events_per_call: int = MAX_EVENTS_PER_CALL,
                 wall_clock: Callable[[], float] = time.monotonic, history: bool = True,
                 checkpoints: bool = True, budgets: CallBudgets | None = None) -> None:
        """A host for the session kept under `root_dir` (one `run-<n>` dir per rebuild, `history/`).
        With a `log`, the session is resumed: the log is replayed up to `position` (step,
        time_ms), or through its last command — as far as one call's budget goes (a notice says
        where it stopped short)."""
        self.root_dir = os.path.abspath(root_dir)
        self.limits = limits or Limits()
        self.budgets = budgets or CallBudgets()
        self.journal = journal or Journal()
        self.lock = threading.RLock()
        self.mode, self.speed = "paused", 1.0
        self.timeline_version = self.clock_version = 0
        self.notices: list[dict[str, Any]] = []
        self.finished: list[CommandRecord] = []       # running commands that ended since the last drain
        self._wall_clock = wall_clock
        self._rate = RecordRate(self.limits.max_records_per_s, wall_clock)
        self._wall_anchor, self._carry_ms = wall_clock(), 0.0
        self._collected: deque[tuple[ev.Event, str]] = deque(maxlen=max_events_per_call)
        self._history_texts: list[str] = []
        self._history_first = 0
        self._collected_total = 0
        self._muted = False
        self._watchers: list[Callable[[ev.Event], None]] = []
        self._script: deque[_ScriptStep] = deque()
        self._scenario_name = ""
        self._scenario_steps = 0
        self._scenario_done = False
        self._last_script_step: _ScriptStep | None = None
        self._scenario_source: dict | None = None         # the whole scenario, when a lesson queues it in parts
        self._disk: tuple[float, int, int] | None = None   # (when, bytes walked, live log bytes then)
        self._discarded: _Discarded | None = None
        self._running: dict[int, CommandRecord] = {}      # record index -> running record
        self._actions = 0                                 # scheduler actions run since the last drain
        self._last_action: str | None = None              # the label of the newest one (what a Step did)
        self.history = History(os.path.join(self.root_dir, "history")) if history else None
        self.series = Series()
        self.log: list[CommandRecord] = list(log)
        self.shape = shape
        self._digests: list[str] = []                     # [k]: the shape and the log's first k commands
        self.checkpoints = CheckpointStore(os.path.join(self.root_dir, "checkpoints"),
                                           reuse=self._log_digest if self.log else None) if checkpoints else None
        self.run_dir = ""
        self.cluster, self.tracker, self._blocking = self._new_cluster(_checked_shape(self.limits, shape))
        self._cursor = 0
        self._furthest = 0
        self._take_checkpoint()
        with self._spending("resuming the session", virtual=False):
            if self.log:
                last = self.log[-1]
                self._seek(*(position or (last.at_step, last.at_time_ms)))
            elif position:
                self._seek(*position)
        if self.history is not None:
            self.history.cut_from(self.cluster.bus.count)

    # -- reading ------------------------------------------------------------------------------
    @property
    def steps(self) -> int:
        return self.cluster.scheduler.steps

    @property
    def now_ms(self) -> int:
        return self.cluster.now_ms

    def position(self) -> tuple[int, int]:
        with self.lock:
            return self.steps, self.now_ms

    def snapshot(self) -> dict[str, Any]:
        """The cluster as engine/inspect's `cluster_state` shows it, cheaply (records: the last 200 per replica)."""
        with self.lock:
            return snap.snapshot(self.cluster)

    def model(self, records_budget: int | None = None, *, baseline: bool = False) -> dict[str, Any]:
        """The protocol's `model`: the whole picture. With `baseline` (it goes to every tab), the
        patches that follow are relative to it (lab.model.ModelTracker.full)."""
        with self.lock:
            return self.tracker.full(records_budget, baseline=baseline)

    def timeline(self) -> dict[str, Any]:
        """The protocol's `timeline`: the furthest step of this line of time, the newest marks, and
        what an undo would bring back."""
        with self.lock:
            marks = []
            for record in reversed(self.log):
                if len(marks) == MAX_MARKS:
                    break
                if record.error is None:
                    marks.append(record.mark())
            horizon = max(self.steps, self._furthest, self.log[-1].at_step if self.log else 0)
            future = len(self.log) - self._cursor
            undo = None
            if self._discarded is not None:
                undo = {"commands": len(self._discarded.records), "steps": self._discarded.furthest,
                        "since": len(self.log) - self._discarded.at_index}
            return {"steps": horizon, "marks": marks[::-1], "applied": self._cursor, "future": future,
                    "future_steps": max(0, horizon - self.steps) if future or horizon > self.steps else 0,
                    "undo": undo}

    def clock(self) -> dict[str, Any]:
        """The protocol's `clock`, and the queued scenario's progress (null when none)."""
        with self.lock:
            scenario = None
            if self._scenario_steps:
                head = self._script[0] if self._script else None
                last = self._last_script_step
                if head is None and last is not None:
                    head = self._unqueued_step_after(last)   # a lesson's next beat, not queued yet
                scenario = {"name": self._scenario_name, "steps": self._scenario_steps, "done": head is None,
                            "next_step": head.index if head else self._scenario_steps,
                            "next": _describe_step(head) if head else None,
                            "next_note": head.note if head else "",
                            "next_note_zh": head.note_zh if head else "",
                            "in_progress": bool(head and head.started),
                            "last_step": last.index if last else None,
                            "last": _describe_step(last) if last else None,
                            "last_note": last.note if last else "",
                            "last_note_zh": last.note_zh if last else ""}
            running = [{"index": r.index, "command": {r.command: r.args}} for r in self._running.values()]
            return {"mode": self.mode, "speed": self.speed, "scenario": scenario, "running": running}

    def _unqueued_step_after(self, last: _ScriptStep) -> _ScriptStep | None:
        """The scenario's step after `last` when a lesson queued only part of it (None otherwise)."""
        steps = self._scenario_source.get("steps", []) if self._scenario_source else []
        if not 0 <= last.index < len(steps) - 1:
            return None
        step = steps[last.index + 1]
        command = step_command(step)
        return _ScriptStep(last.index + 1, command, dict(step[command] or {}), bool(step.get("expect_error")),
                           str(step.get("note") or ""), note_zh=str(step.get("note_zh") or ""))

    def take_notices(self) -> list[dict[str, Any]]:
        """Errors nobody asked for (a queued scenario step, a running command), oldest first; cleared."""
        with self.lock:
            out, self.notices = self.notices, []
            return out

    def disk_bytes(self) -> int:
        """Bytes in the current run dir: walked at most every DISK_USAGE_TTL_S, plus what the open
        logs grew since (cheap: segment sizes are known in memory)."""
        now, live = self._wall_clock(), self._open_log_bytes()
        if self._disk is None or now - self._disk[0] > DISK_USAGE_TTL_S:
            self._disk = (now, _tree_size(self.run_dir), live)
        _, walked, live_then = self._disk
        return max(0, walked + live - live_then)

    def _open_log_bytes(self) -> int:
        return sum(part.log.size_in_bytes() for broker in self.cluster.brokers.values()
                   for part in broker.partitions.values())

    # -- commands -----------------------------------------------------------------------------
    def apply(self, command: str, args: dict | None = None, *, discard_future: bool = False) -> Events:
        """Apply a scenario step now and log it. With logged commands ahead (after a rewind), it
        cuts them off only with `discard_future` (else HostError FUTURE_EXISTS); `undo_discard`
        brings them back. Raises HostError when the step is unknown, over a limit, or fails in the
        engine (then with the events it caused). A step whose call blocks keeps running with the
        clock: the result's `record.running` says so, and `finished` lists it when it ends."""
        with self.lock, self._spending(command):
            args = self._check_command(command, {} if args is None else args)
            self._catch_up()
            if self._cursor < len(self.log) and not discard_future:
                ahead = len(self.log) - self._cursor
                raise HostError(f"{ahead} command{'s' if ahead != 1 else ''} lie ahead on the timeline (you "
                                f"rewound): applying this one discards them — confirm, or play on to keep them",
                                "FUTURE_EXISTS", self._drain())
            try:
                record = self._apply_new(command, args, tag=None)
            except _Withdrawn as stop:
                raise HostError(str(stop), BUDGET_EXCEEDED, self._drain()) from None
            result = self._drain()
            result.record, result.warnings = record, list(record.warnings)
            if record.error is not None:
                raise HostError(record.error, record.kafka_error, result)
            return result

    def _check_command(self, command: Any, args: Any) -> dict:
        """The command's arguments, checked and normalised (engine.scenarios.schema), or HostError;
        then the session's limits."""
        if not isinstance(command, str) or command not in STEPS:
            raise HostError(f"Unknown command {command!r} (known: {', '.join(sorted(set(STEPS) - CLOCK_STEPS))})",
                            "INVALID_REQUEST")
        if command in CLOCK_STEPS:
            raise HostError(f"{command!r} moves time: send a clock message (play, step, step_until) instead",
                            "INVALID_REQUEST")
        if not isinstance(args, dict):
            raise HostError(f"The arguments of {command} must be an object", "INVALID_REQUEST")
        try:
            args = check_step(command, args)
        except StepArgumentError as error:
            raise HostError(str(error), getattr(error, "kafka_name", None) or "INVALID_REQUEST") from None
        try:
            check_command(self.limits, self.cluster, command, args, self._rate, self.disk_bytes)
        except LimitExceeded as error:
            raise HostError(str(error), error.kafka_name) from None
        return args

    def _apply_new(self, command: str, args: dict, tag: int | None) -> CommandRecord:
        """Log a new command and apply it. One that runs out of the call's budget (an inline call
        that runs the scheduler, such as create_topic waiting for its leaders) is taken back —
        unlogged, the cluster put back as it was, a future it cut restored — and _Withdrawn
        raised: a replay could not stop it at the same action, so it must not be on the line."""
        before = (self._discarded, self._furthest)
        cut = self._cut_future()
        index = len(self.log)
        record = CommandRecord(index, self.steps, self.now_ms, command, copy.deepcopy(args),
                               index if tag is None else tag)
        self.log.append(record)
        self._cursor = len(self.log)
        try:
            self._run_record(record, new=True)
        except BudgetExceeded as stop:
            self._withdraw(record, cut, *before)
            raise _Withdrawn(f"{stop.message}: {command} was not applied (the cluster is as it was before it)"
                             ) from None
        self.timeline_version += 1
        self.journal.appended(record, self.steps, self.now_ms)
        return record

    def _run_record(self, record: CommandRecord, *, new: bool = False) -> None:
        """Apply a logged command to the cluster: inline, or — a call that may block — as a running
        command that takes turns with the clock. An engine error is kept on the record. A `new`
        inline command spends from the call's budget; one already on the line of time (a replay,
        the future played again) ran within a budget once and does exactly that again, so it runs
        whole — the budget is checked before it starts, never inside it."""
        record.first_seq = self.cluster.bus.count
        self.timeline_version += 1   # one command fewer ahead (or one more behind)
        call = _step_call(self.cluster, record)
        if not may_block(record.command, record.args):
            if new:
                _settle_record(record, _run_inline(call))
            else:
                with call_budget.spending(None):
                    _settle_record(record, _run_inline(call))
            return
        try:
            running = self._blocking.start(record.index, record.command, call)
        except OverflowError as error:
            record.error, record.kafka_error = str(error), "POLICY_VIOLATION"
            return
        if running.finished:
            _settle_record(record, running.error)
        else:
            record.running = True
            self._running[record.index] = record
            self.clock_version += 1   # the clock message lists what is running

    def _after_action(self) -> None:
        """An action ran: let every running command take its turn; settle those that ended."""
        if not self._blocking:
            return
        for running in self._blocking.after_action():
            self._command_ended(running)

    def _command_ended(self, running: RunningCommand) -> None:
        record = self._running.pop(running.index)
        record.running = False
        _settle_record(record, running.error)
        self.timeline_version += 1
        self.clock_version += 1
        if self._muted:
            return
        self.journal.finished(record)
        self.finished.append(record)
        if record.error is not None and not self._script_owns(record):
            self.notices.append({"message": f"{record.command} (command {record.index}) failed: {record.error}",
                                 "kafka_error": record.kafka_error, "expected": False})

    # -- the clock ----------------------------------------------------------------------------
    # play, pause and set_speed first run the clock up to now: the events of that last stretch
    # are theirs to return, or the tabs would see them only with the next call that returns any.
    def play(self, speed: float | None = None) -> Events:
        with self.lock, self._spending("play"):
            speed = None if speed is None else _checked_speed(speed)
            self._catch_up()
            self.speed = self.speed if speed is None else speed
            self.mode = "live"
            self._wall_anchor, self._carry_ms = self._wall_clock(), 0.0
            self.clock_version += 1
            return self._drain()

    def pause(self) -> Events:
        with self.lock, self._spending("pause"):
            self._pause()
            return self._drain()

    def _pause(self) -> None:
        if self.mode != "paused":
            self._catch_up()
            self.mode = "paused"
            self.clock_version += 1

    def set_speed(self, speed: float) -> Events:
        with self.lock, self._spending("the speed change"):
            speed = _checked_speed(speed)
            self._catch_up()
            self.speed = speed
            self.clock_version += 1
            return self._drain()

    def tick(self, wall_ms: float | None = None, work_ms: float | None = None) -> Events:
        """Live: move virtual time by the wall time since the last move × speed — or by `wall_ms`
        × speed when given (tests, tools). A no-op when paused. With `work_ms`, stop after that much
        wall-clock work: a cluster too busy to keep up runs slower than asked. The result says when
        the next thing is due (`next_due_ms`, wall clock)."""
        with self.lock, self._spending("the live clock"):
            behind = self._catch_up(work_ms, wall_ms)
            self._pause_if_script_done()
            result = self._drain()
            result.next_due_ms = self._next_due_wall_ms() if self.mode == "live" else None
            result.behind = behind and self.mode == "live"
            return result

    def _catch_up(self, work_ms: float | None = CATCH_UP_WORK_MS, wall_ms: float | None = None) -> bool:
        """Live: run what is due between the last catch-up and now (wall clock × speed). True if
        the work budget — or the call's budget: its virtual time, actions or wall time — ran out
        first (the cluster is behind; the rest of that time is skipped)."""
        if self.mode != "live":
            return False
        now_wall = self._wall_clock()
        elapsed_ms = (now_wall - self._wall_anchor) * 1000 if wall_ms is None else wall_ms
        budget = elapsed_ms * self.speed + self._carry_ms
        self._wall_anchor = now_wall
        whole = int(budget)
        self._carry_ms = budget - whole
        until_time, clipped = self.now_ms + whole, False
        spending = call_budget.current()
        if spending is not None and spending.virtual_until_ms is not None and until_time > spending.virtual_until_ms:
            until_time, clipped, self._carry_ms = spending.virtual_until_ms, True, 0.0
        done = self._script_done_stop()
        if work_ms is None:
            stop = done
        else:
            deadline = now_wall + work_ms / 1000
            stop = lambda: done() or self._wall_clock() > deadline  # noqa: E731
        try:
            stopped = self._advance(until_time=until_time, stop=stop) is True
        except BudgetExceeded:
            stopped = True     # between two actions: the cluster simply runs slower than asked
        return (stopped or clipped) and not done()

    def _next_due_wall_ms(self) -> float | None:
        """Wall-clock ms until the next thing the clock must do (None: nothing is scheduled)."""
        nxt = self.cluster.scheduler.next_time()
        if self._cursor < len(self.log) and self.log[self._cursor].at_step <= self.steps:
            nxt = self.log[self._cursor].at_time_ms
        elif self._script:
            head = self._script[0]
            if (head.command not in CLOCK_STEPS and head.record is None) or nxt is None:
                return 0.0
            if head.command == "run" and head.started:
                nxt = min(nxt, head.end_ms)
        if nxt is None:
            return None
        return max(0, nxt - self.now_ms) / self.speed

    def step(self) -> Events:
        """One scheduler action — or, while a scenario is queued, its next step, whole. A scenario
        step that runs over the call's budget stops between two actions (HostError
        BUDGET_EXCEEDED); the next `step` goes on with it."""
        with self.lock:
            try:
                with self._spending("Step"):
                    self._catch_up()
                    if self._script:
                        first = self._script[0]
                        self._advance(stop=lambda: not self._script or self._script[0] is not first)
                        self._pause_if_script_done()
                    else:
                        self._advance(max_actions=1)
                        self._apply_due()
            except BudgetExceeded as stop:
                raise HostError(f"{stop.message}. Step again to go on from here", BUDGET_EXCEEDED,
                                self._drain()) from None
            return self._drain()

    def step_until(self, kind: str) -> Events:
        """Run until the next event of `kind` (at most ten virtual minutes)."""
        with self.lock:
            if kind not in ev.EVENT_TYPES:
                raise HostError(f"Unknown event kind {kind!r}", "INVALID_REQUEST")
            self._catch_up()
            seen: list[ev.Event] = []
            watcher = lambda e: seen.append(e) if e.kind == kind else None  # noqa: E731
            end = self.now_ms + STEP_UNTIL_MAX_MS
            self._watchers.append(watcher)
            stopped: BudgetExceeded | None = None
            try:
                with self._spending("step_until"):
                    script_done = self._script_done_stop()
                    self._advance(until_time=end, settle=False, stop=lambda: bool(seen) or script_done())
                    if not self._script:
                        self._apply_due()
            except BudgetExceeded as stop:
                stopped = stop
            finally:
                self._watchers.remove(watcher)
            self._pause_if_script_done()
            result = self._drain()
            if stopped is not None:
                raise HostError(f"No {kind} event yet: {stopped.message}", BUDGET_EXCEEDED, result)
            if not seen:
                raise HostError(f"No {kind} event within {STEP_UNTIL_MAX_MS // 1000} s of virtual time "
                                f"(or {self.limits.max_actions_per_call} actions)", None, result)
            return result

    # -- travelling in time -------------------------------------------------------------------
    # -- moving forward -----------------------------------------------------------------------
    def _advance(self, *, until_time: int | None = None, settle: bool = True, max_actions: int | None = None,
                 stop: Callable[[], bool] | None = None, max_commands: int | None = None) -> bool | None:
        """Move forward unit by unit: a logged command that is due, a queued scenario step, or one
        scheduler action (and the running commands' turns after it). Stops at `until_time`
        (virtual; with `settle` the clock is then moved there, as run_for does), after
        `max_actions` actions, or when `stop()` says so. Returns True if `stop` ended it, False if
        nothing is left to run, None if a bound did."""
        limit = self.limits.max_actions_per_call if max_actions is None else max_actions
        commands = len(self.log) if max_commands is None else max_commands
        actions = 0
        measured, since = 0, time.perf_counter()
        while actions < limit:
            if actions - measured >= CHECKPOINT_CHECK_EVERY:
                since = self._account_work(since)
                measured = actions
            if stop is not None and stop():
                self._account_work(since)
                return True
            if self._cursor < commands and self.log[self._cursor].at_step <= self.steps:
                record = self.log[self._cursor]
                if until_time is not None and record.at_time_ms > until_time:
                    self._settle(until_time, settle)
                    return None
                call_budget.check()   # a logged command runs whole: stop before it, if at all
                self._move_clock(record.at_time_ms)
                self._cursor += 1
                self._run_record(record)
                continue
            unit = self._script_unit(until_time, settle) if self._script else self._plain_unit(until_time, settle)
            if unit == _WAIT:
                self._account_work(since)
                return None if self.cluster.scheduler.next_time() is not None or until_time is not None else False
            if unit == _ACTED:
                actions += 1
        self._account_work(since)
        return None

    def _act(self) -> None:
        """Run one scheduler action (and let the running commands take their turns after it)."""
        bus = self.cluster.bus
        bus.drain()   # Cluster.step's bookkeeping: the bus keeps a step's events until drained
        entry = self.cluster.scheduler.step()
        bus.drain()
        if entry is not None:
            self._actions += 1
            self._last_action = entry.label
        self._after_action()

    def _plain_unit(self, until_time: int | None, settle: bool) -> str:
        nxt = self.cluster.scheduler.next_time()
        if nxt is None or (until_time is not None and nxt > until_time):
            self._settle(until_time, settle)
            return _WAIT
        self._act()
        return _ACTED

    def _settle(self, until_time: int | None, settle: bool) -> None:
        if settle and until_time is not None:
            self._move_clock(until_time)

    def _move_clock(self, time_ms: int) -> None:
        if time_ms > self.now_ms:
            self.cluster.scheduler.advance_to(time_ms)

    # -- scenarios ----------------------------------------------------------------------------
    # -- reset --------------------------------------------------------------------------------
    def reset(self, shape: Shape) -> Events:
        """A fresh cluster of `shape` in a new run dir, with an empty log; the clock pauses."""
        with self.lock:
            shape = _checked_shape(self.limits, shape)
            old = (self.cluster, self._blocking, self.run_dir)
            series, self.series = self.series, Series()
            try:
                self.cluster, self.tracker, self._blocking = self._new_cluster(shape)
            except HostError:
                self.series = series   # the old cluster stays, and its charts
                raise
            _discard(*old)
            self.shape = shape
            self.log, self._cursor, self._furthest = [], 0, 0
            self._digests = []
            self._running.clear()
            self._discarded = None
            self._drop_script()
            self.mode = "paused"
            self.clock_version += 1
            self.timeline_version += 1
            self.journal.restarted(shape)
            if self.history is not None:
                self.history.cut_from(0)
            if self.checkpoints is not None:
                self.checkpoints.clear()
                self._take_checkpoint()
            self._forget_collected()
            return self._drain(patch=False)

    def close(self) -> None:
        """Shut the cluster down and delete its run dir (the log, kept by the journal, remains)."""
        with self.lock:
            _discard(self.cluster, self._blocking, self.run_dir)
            if self.history is not None:
                self.history.close()
            if self.checkpoints is not None:
                self.checkpoints.close()

    # -- internals ----------------------------------------------------------------------------
    def _spending(self, what: str, *, virtual: bool = True) -> AbstractContextManager[CallBudget | None]:
        """Charge the scheduler actions run inside the block to a budget of one call
        (engine.sim.budget): Limits.max_actions_per_call actions, CallBudgets' wall time and —
        with `virtual` — virtual time from now."""
        return call_budget.spending(CallBudget(
            max_actions=self.limits.max_actions_per_call, wall_ms=self.budgets.wall_ms,
            virtual_until_ms=self.now_ms + self.budgets.virtual_ms if virtual else None, what=what,
            names={"wall": f"{WALL_BUDGET_SETTING}={self.budgets.wall_ms:g}",
                   "virtual": f"{VIRTUAL_BUDGET_SETTING}={self.budgets.virtual_ms}",
                   "actions": f"{ACTIONS_BUDGET_SETTING}={self.limits.max_actions_per_call}"}))

    def _new_cluster(self, shape: Shape) -> tuple[Cluster, ModelTracker, BlockingCommands]:
        os.makedirs(self.root_dir, exist_ok=True)
        run_dir = os.path.join(self.root_dir, f"run-{_next_run_number(self.root_dir)}")
        self._muted = True
        try:
            # A start-up runs until the cluster is idle: its own budget, so that a timer firing
            # every 0 ms (a loop at one virtual instant) cannot hold the thread for good.
            with self._spending("starting the cluster", virtual=False):
                cluster = Cluster(brokers=shape.brokers, data_dir=run_dir, seed=shape.seed,
                                  config=dict(shape.config), truncation=shape.truncation, on_event=self._on_event)
        except (ClusterError, InvalidConfigError, ValueError, TypeError) as error:
            shutil.rmtree(run_dir, ignore_errors=True)
            raise HostError(f"Cannot build that cluster: {_describe(error)}",
                            getattr(error, "kafka_name", "INVALID_CONFIG")) from None
        except BudgetExceeded as stop:
            shutil.rmtree(run_dir, ignore_errors=True)
            raise HostError(f"Cannot build that cluster: {stop.message} — does a timer of its config fire every "
                            f"0 ms?", BUDGET_EXCEEDED) from None
        finally:
            self._muted = False
        self.run_dir, self._disk = run_dir, None
        return cluster, ModelTracker(cluster), BlockingCommands(cluster.scheduler)

    def _on_event(self, event: ev.Event) -> None:
        tracker = getattr(self, "tracker", None)
        if tracker is not None and event.seq >= 0:
            tracker.on_event(event)
        self.series.on_event(event)
        if not self._muted:
            text = event_json(event)
            self._collected.append((event, text))
            self._collected_total += 1
            if self.history is not None:
                if not self._history_texts:
                    self._history_first = event.seq
                self._history_texts.append(text)
        for watcher in self._watchers:
            watcher(event)

    def _forget_collected(self) -> None:
        self._collected.clear()
        self._collected_total = 0
        self._history_texts = []
        self.finished.clear()

    def _drain(self, *, patch: bool = True) -> Events:
        """What the call caused. `patch=False` after a rebuild or a jump: the browsers are sent the
        whole model instead (`model_reset`)."""
        pairs = list(self._collected)
        dropped = self._collected_total - len(pairs)
        self._collected.clear()
        self._collected_total = 0
        if self._history_texts:
            self.history.append(self._history_first, self._history_texts)
            self._history_texts = []
        actions, self._actions = self._actions, 0
        return Events([e for e, _ in pairs], dropped, self.steps, self.now_ms, texts=[t for _, t in pairs],
                      patch=self.tracker.patch() if patch else None, seq=self.cluster.bus.count,
                      model_reset=not patch, actions=actions, last_action=self._last_action if actions else None)


def _step_call(cluster: Cluster, record: CommandRecord) -> Callable[[], None]:
    def call() -> None:
        record.warnings = run_step(cluster, record.command, record.args, record.tag)
    return call


def _run_inline(call: Callable[[], None]) -> BaseException | None:
    try:
        call()
    except Exception as error:  # noqa: BLE001 - kept on the record (engine bugs too: replay stays faithful)
        return error
    return None


def _settle_record(record: CommandRecord, error: BaseException | None) -> None:
    if error is None:
        return
    if isinstance(error, ENGINE_ERRORS):
        record.error, record.kafka_error = _describe(error), getattr(error, "kafka_name", None)
    else:
        record.error = f"internal error: {_describe(error)}"
        record.kafka_error = getattr(error, "kafka_name", None) or "UNKNOWN_SERVER_ERROR"


def _checked_shape(limits: Limits, shape: Shape) -> Shape:
    """Every way a shape reaches a host (a tab, a form, a scenario, a row stored before these
    checks existed) is held to the same rules: Limits.check_shape, whole."""
    try:
        limits.check_shape(shape.brokers, shape.seed, shape.truncation, shape.config)
    except LimitExceeded as error:
        raise HostError(str(error), error.kafka_name) from None
    if shape.truncation not in TRUNCATION_MODES:
        raise HostError(f"truncation must be one of {', '.join(TRUNCATION_MODES)}, not {shape.truncation!r}",
                        "INVALID_CONFIG")
    if isinstance(shape.seed, bool) or not isinstance(shape.seed, int):
        raise HostError(f"seed must be a whole number, not {shape.seed!r}", "INVALID_REQUEST")
    if not isinstance(shape.config, dict):
        raise HostError("config must be an object of Kafka settings", "INVALID_CONFIG")
    return shape


def _checked_speed(speed: Any) -> float:
    if isinstance(speed, bool) or not isinstance(speed, (int, float)) or not MIN_SPEED <= speed <= MAX_SPEED:
        raise HostError(f"speed must be between {MIN_SPEED} and {MAX_SPEED}, not {speed!r}", "INVALID_REQUEST")
    return float(speed)






def _tree_size(path: str) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(folder, name))
            except OSError:
                pass
    return total
