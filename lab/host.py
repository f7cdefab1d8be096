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
import hashlib
import json
import logging
import os
import queue
import shutil
import threading
import time
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Callable

from engine import events as ev
from engine.broker.errors import InvalidConfigError
from engine.cluster import Cluster, ClusterError
from engine.replication.fetcher import TRUNCATION_MODES
from engine.scenarios.runner import STEPS, ScenarioError, run_step, validate
from engine.scenarios.schema import StepArgumentError, check_step
from lab import snapshot as snap
from lab.blocking import BlockingCommands, RunningCommand, may_block
from lab.checkpoints import CheckpointStore, Entry
from lab.history import History
from lab.limits import LimitExceeded, Limits, RecordRate, check_command
from lab.model import ModelTracker
from lab.series import Series
from lab.snapshot import event_json

CLOCK_STEPS = frozenset({"run", "step", "run_until_idle", "run_until"})
MIN_SPEED, MAX_SPEED = 0.1, 10.0
MAX_EVENTS_PER_CALL = 500       # events a call hands back by default; older ones are counted, not kept
MAX_MARKS = 500                 # timeline marks sent (the newest)
MAX_SCENARIO_STEPS = 10_000
STEP_UNTIL_MAX_MS = 600_000     # as the runner's run_until: ten virtual minutes
DISK_USAGE_TTL_S = 30.0         # how long a walk of the run dir is trusted (log growth is added to it)
CATCH_UP_WORK_MS = 40.0         # wall-clock work a live clock may do to catch up before a command
ENGINE_ERRORS = (ClusterError, InvalidConfigError, ValueError, KeyError, TypeError)
CHECKPOINT_CHECK_EVERY = 64     # actions between two looks at whether a checkpoint is due
SERIES_FILE = "lab-series.json" # the charts' series, kept in each engine checkpoint's dir

# What one unit of forward motion did (see SessionHost._advance).
_ACTED, _MOVED, _WAIT = "acted", "moved", "wait"


class HostError(Exception):
    """A request the host refused or a command that failed; nothing was lost.
    `kafka_error` is Kafka's error name where one exists (or the lab's own, e.g. FUTURE_EXISTS);
    `events` what happened before it failed."""

    def __init__(self, message: str, kafka_error: str | None = None, events: Events | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kafka_error = kafka_error
        self.events = events or Events([])


@dataclass(frozen=True)
class Shape:
    """A cluster's shape: what a fresh run of the session starts from."""
    brokers: int = 3
    seed: int = 0
    truncation: str = "leader-epoch"
    config: dict = field(default_factory=dict)


@dataclass
class CommandRecord:
    """One entry of the command log: a scenario step applied at `at_step` / `at_time_ms`, its
    events numbered from `first_seq` on. `running` while its call is still under way."""
    index: int
    at_step: int
    at_time_ms: int
    command: str
    args: dict
    tag: int            # the step number handed to the step function (the runner's "produced[].step")
    error: str | None = None
    kafka_error: str | None = None
    first_seq: int = -1
    running: bool = False
    warnings: list[str] = field(default_factory=list)   # what Kafka accepted but the learner may not mean

    def mark(self) -> dict[str, Any]:
        out = {"index": self.index, "step": self.at_step, "time_ms": self.at_time_ms,
               "first_seq": self.first_seq, "command": {self.command: self.args}}
        if self.running:
            out["running"] = True
        return out


@dataclass
class Events:
    """What one host call caused: its newest events (at most `max_events_per_call`, with their JSON
    in `texts`), how many older ones were left out, the model patch, commands that finished, and
    where the clock stood afterwards."""
    events: list[ev.Event]
    dropped: int = 0
    step: int = 0
    time_ms: int = 0
    next_due_ms: float | None = None
    behind: bool = False  # a live tick ran out of its work budget before the clock caught up
    texts: list[str] = field(default_factory=list)
    patch: dict | None = None
    seq: int = 0          # the next event's number (every event before it is in this call or earlier)
    record: CommandRecord | None = None   # the command `apply` logged
    warnings: list[str] = field(default_factory=list)
    model_reset: bool = False   # the cluster jumped (a rewind, a reset): send the whole model, not a patch
    actions: int = 0            # scheduler actions the call ran
    last_action: str | None = None   # the label of the last one ("broker-2: HW checkpoint")


class Journal:
    """Where a host writes its log so that it outlives the process. Each method is called with the
    host's lock held, on the thread running the host, and must not call back into the host. This
    base keeps nothing (tests, benchmarks); lab.registry's keeps the log in the database."""

    def appended(self, record: CommandRecord, step: int, time_ms: int) -> None:
        """`record` was applied and logged; the clock now stands at `step` / `time_ms`."""

    def finished(self, record: CommandRecord) -> None:
        """`record`'s call, which was running, ended (its `error` is known now)."""

    def cut(self, from_index: int) -> None:
        """The records from `from_index` on (the future) are gone."""

    def restored(self, records: list[CommandRecord]) -> None:
        """`records` (a future that was cut) are back at the end of the log."""

    def restarted(self, shape: Shape) -> None:
        """A fresh cluster of `shape` with an empty log; the previous log is history."""


@dataclass
class _ScriptStep:
    """A queued scenario step; clock steps keep their progress here while they play."""
    index: int
    command: str
    args: dict
    expect_error: bool
    note: str = ""
    started: bool = False
    end_ms: int = 0
    remaining: int = 0
    seen: bool = False
    watcher: Callable[[ev.Event], None] | None = None
    record: CommandRecord | None = None   # a command step whose call is running


@dataclass
class _Discarded:
    """A future cut off by a command: enough to put it back (`undo_discard`)."""
    at_index: int                  # the first record of the new line of time
    records: list[CommandRecord]
    furthest: int                  # how far the old line of time reached
    position: tuple[int, int]      # where the clock stood when it was cut


class SessionHost:
    def __init__(self, root_dir: str, shape: Shape, *, limits: Limits | None = None,
                 journal: Journal | None = None, log: Iterable[CommandRecord] = (),
                 position: tuple[int, int] | None = None, max_events_per_call: int = MAX_EVENTS_PER_CALL,
                 wall_clock: Callable[[], float] = time.monotonic, history: bool = True,
                 checkpoints: bool = True) -> None:
        """A host for the session kept under `root_dir` (one `run-<n>` dir per rebuild, `history/`).
        With a `log`, the session is resumed: the log is replayed up to `position` (step,
        time_ms), or through its last command."""
        self.root_dir = os.path.abspath(root_dir)
        self.limits = limits or Limits()
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
        """The cluster as `Cluster.state()` shows it, cheaply (records: the last 200 per replica)."""
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
                scenario = {"name": self._scenario_name, "steps": self._scenario_steps, "done": head is None,
                            "next_step": head.index if head else self._scenario_steps,
                            "next": _describe_step(head) if head else None,
                            "next_note": head.note if head else "",
                            "in_progress": bool(head and head.started),
                            "last_step": last.index if last else None,
                            "last": _describe_step(last) if last else None,
                            "last_note": last.note if last else ""}
            running = [{"index": r.index, "command": {r.command: r.args}} for r in self._running.values()]
            return {"mode": self.mode, "speed": self.speed, "scenario": scenario, "running": running}

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
        with self.lock:
            args = self._check_command(command, {} if args is None else args)
            self._catch_up()
            if self._cursor < len(self.log) and not discard_future:
                ahead = len(self.log) - self._cursor
                raise HostError(f"{ahead} command{'s' if ahead != 1 else ''} lie ahead on the timeline (you "
                                f"rewound): applying this one discards them — confirm, or play on to keep them",
                                "FUTURE_EXISTS", self._drain())
            record = self._apply_new(command, args, tag=None)
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
        self._cut_future()
        index = len(self.log)
        record = CommandRecord(index, self.steps, self.now_ms, command, copy.deepcopy(args),
                               index if tag is None else tag)
        self.log.append(record)
        self._cursor = len(self.log)
        self._run_record(record)
        self.timeline_version += 1
        self.journal.appended(record, self.steps, self.now_ms)
        return record

    def _run_record(self, record: CommandRecord) -> None:
        """Apply a logged command to the cluster: inline, or — a call that may block — as a running
        command that takes turns with the clock. An engine error is kept on the record."""
        record.first_seq = self.cluster.bus.count
        self.timeline_version += 1   # one command fewer ahead (or one more behind)
        call = _step_call(self.cluster, record)
        if not may_block(record.command, record.args):
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

    def _cut_future(self) -> None:
        if self._cursor < len(self.log):
            self._discarded = _Discarded(self._cursor, self.log[self._cursor:],
                                         max(self._furthest, self.log[-1].at_step), self.position())
            del self.log[self._cursor:]
            self._log_changed(self._cursor)
            self.journal.cut(self._cursor)
            self.timeline_version += 1
            if self.checkpoints is not None:
                self.checkpoints.drop_after(self.steps, self._cursor)
        self._furthest = self.steps

    def undo_discard(self) -> Events:
        """Bring back the future the last cut discarded: the commands applied since are dropped,
        the clock goes back to where the cut happened (paused), and the old future is ahead again."""
        with self.lock:
            discarded = self._discarded
            if discarded is None:
                raise HostError("There is nothing to undo: no future was discarded", "INVALID_REQUEST")
            self._pause()
            self._drop_script()
            step, time_ms = discarded.position
            if len(self.log) > discarded.at_index:
                del self.log[discarded.at_index:]
                self.journal.cut(discarded.at_index)
            self._log_changed(discarded.at_index)
            self.log.extend(discarded.records)
            self.journal.restored(discarded.records)
            self._discarded = None
            self._furthest = max(self._furthest, discarded.furthest)
            self._seek(step, time_ms, commands=discarded.at_index)
            self.timeline_version += 1
            self.clock_version += 1
            self._forget_collected()
            return self._drain(patch=False)

    # -- the clock ----------------------------------------------------------------------------
    # play, pause and set_speed first run the clock up to now: the events of that last stretch
    # are theirs to return, or the tabs would see them only with the next call that returns any.
    def play(self, speed: float | None = None) -> Events:
        with self.lock:
            speed = None if speed is None else _checked_speed(speed)
            self._catch_up()
            self.speed = self.speed if speed is None else speed
            self.mode = "live"
            self._wall_anchor, self._carry_ms = self._wall_clock(), 0.0
            self.clock_version += 1
            return self._drain()

    def pause(self) -> Events:
        with self.lock:
            self._pause()
            return self._drain()

    def _pause(self) -> None:
        if self.mode != "paused":
            self._catch_up()
            self.mode = "paused"
            self.clock_version += 1

    def set_speed(self, speed: float) -> Events:
        with self.lock:
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
        with self.lock:
            behind = self._catch_up(work_ms, wall_ms)
            self._pause_if_script_done()
            result = self._drain()
            result.next_due_ms = self._next_due_wall_ms() if self.mode == "live" else None
            result.behind = behind and self.mode == "live"
            return result

    def _catch_up(self, work_ms: float | None = CATCH_UP_WORK_MS, wall_ms: float | None = None) -> bool:
        """Live: run what is due between the last catch-up and now (wall clock × speed). True if
        the work budget ran out first (the cluster is behind; the rest of that time is skipped)."""
        if self.mode != "live":
            return False
        now_wall = self._wall_clock()
        elapsed_ms = (now_wall - self._wall_anchor) * 1000 if wall_ms is None else wall_ms
        budget = elapsed_ms * self.speed + self._carry_ms
        self._wall_anchor = now_wall
        whole = int(budget)
        self._carry_ms = budget - whole
        done = self._script_done_stop()
        if work_ms is None:
            stop = done
        else:
            deadline = now_wall + work_ms / 1000
            stop = lambda: done() or self._wall_clock() > deadline  # noqa: E731
        return self._advance(until_time=self.now_ms + whole, stop=stop) is True and not done()

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
        """One scheduler action — or, while a scenario is queued, its next step, whole."""
        with self.lock:
            self._catch_up()
            if self._script:
                first = self._script[0]
                self._advance(stop=lambda: not self._script or self._script[0] is not first)
                self._pause_if_script_done()
            else:
                self._advance(max_actions=1)
                self._apply_due()
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
            try:
                script_done = self._script_done_stop()
                self._advance(until_time=end, settle=False, stop=lambda: bool(seen) or script_done())
            finally:
                self._watchers.remove(watcher)
            if not self._script:
                self._apply_due()
            self._pause_if_script_done()
            result = self._drain()
            if not seen:
                raise HostError(f"No {kind} event within {STEP_UNTIL_MAX_MS // 1000} s of virtual time "
                                f"(or {self.limits.max_actions_per_call} actions)", None, result)
            return result

    # -- travelling in time -------------------------------------------------------------------
    def rewind(self, to_step: int, after_seq: int | None = None, commands: int | None = None) -> Events:
        """Go to step `to_step` of this line of time: the state there, with every command logged at
        or before it applied — or, with `after_seq`, only those applied before event `after_seq`
        was published (the state just after that event), or with `commands`, exactly that many
        commands of the log applied (a timeline mark: just after its command). Backwards, the
        cluster is rebuilt by replay. The clock pauses, a queued scenario is dropped, and the replay's events are not
        returned (a `model` follows instead)."""
        with self.lock:
            if isinstance(to_step, bool) or not isinstance(to_step, int) or to_step < 0:
                raise HostError(f"rewind needs a step number >= 0, not {to_step!r}", "INVALID_REQUEST")
            for name, value in (("after_seq", after_seq), ("commands", commands)):
                if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                    raise HostError(f"{name} must be a whole number >= 0, not {value!r}", "INVALID_REQUEST")
            horizon = max(self._furthest, self.steps, self.log[-1].at_step if self.log else 0)
            if to_step > horizon + self.limits.max_actions_per_call:
                raise HostError(f"Step {to_step} lies beyond this line of time (it reaches step {horizon}); "
                                f"play on to get there", "INVALID_REQUEST")
            self._pause()
            self._drop_script()
            self.clock_version += 1
            self.timeline_version += 1   # the commands applied and ahead change with the position
            self._furthest = max(self._furthest, self.steps)
            self._seek(to_step, None, commands=self._commands_at(to_step, after_seq, commands))
            self._forget_collected()
            return self._drain(patch=False)

    def _commands_at(self, to_step: int, after_seq: int | None, commands: int | None = None) -> int:
        """How many logged commands the state at `to_step` has applied: all logged at or before it,
        or only those started before event `after_seq`, or `commands` (each within what that
        step allows: every command of an earlier step is applied, none of a later one)."""
        before = sum(1 for r in self.log if r.at_step < to_step)
        upto = sum(1 for r in self.log if r.at_step <= to_step)
        if commands is not None:
            return min(upto, max(before, commands))
        if after_seq is None:
            return upto
        started = sum(1 for r in self.log if r.at_step <= to_step and 0 <= r.first_seq <= after_seq)
        return min(upto, max(before, started))

    def _seek(self, to_step: int, to_time_ms: int | None, commands: int | None = None) -> None:
        """Replay (muted) to `to_step`, then apply the commands due there (the first `commands` of
        the log at most); then, if given, let the clock reach `to_time_ms` (where a live clock stood
        between actions)."""
        limit = len(self.log) if commands is None else commands
        backwards = to_step < self.steps or (to_step == self.steps and self._cursor > limit)
        nearest = self.checkpoints.nearest(to_step, limit) if self.checkpoints is not None else None
        if nearest is not None and (backwards or nearest.step > self.steps):
            self._restore(nearest)
        elif backwards:
            self._rebuild()
        self._muted = True
        try:
            while self.steps < to_step:
                if self._advance(stop=lambda: self.steps >= to_step, max_commands=limit) is False:
                    break  # nothing left to run: the cluster is idle forever
            self._apply_due(up_to_time=to_time_ms, max_commands=limit)
            if to_time_ms is not None:
                self._move_clock(to_time_ms)
        finally:
            self._muted = False
        self.tracker.rewound()
        if self.history is not None:
            self.history.cut_from(self.cluster.bus.count)

    def _apply_due(self, up_to_time: int | None = None, max_commands: int | None = None) -> None:
        limit = len(self.log) if max_commands is None else max_commands
        while self._cursor < limit and self.log[self._cursor].at_step <= self.steps:
            record = self.log[self._cursor]
            if up_to_time is not None and record.at_time_ms > up_to_time:
                return
            self._move_clock(record.at_time_ms)
            self._cursor += 1
            self._run_record(record)

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

    def _account_work(self, since: float) -> float:
        """Count the engine work since `since` towards the next checkpoint, and take it when due
        (only at a clean point: no command's call running). Returns now."""
        now = time.perf_counter()
        if self.checkpoints is not None:
            self.checkpoints.worked((now - since) * 1000)
            if self.checkpoints.due():
                self._take_checkpoint()
                now = time.perf_counter()
        return now

    def _log_digest(self, commands: int) -> str | None:
        """A digest of the shape and the log's first `commands` records (None past the log's end):
        what ties a checkpoint to this line of time."""
        if commands > len(self.log):
            return None
        if not self._digests:
            self._digests = [hashlib.sha256(repr(self.shape).encode()).hexdigest()]
        while len(self._digests) <= commands:
            r = self.log[len(self._digests) - 1]
            text = json.dumps([self._digests[-1], r.at_step, r.at_time_ms, r.command, r.args, r.tag], sort_keys=True)
            self._digests.append(hashlib.sha256(text.encode()).hexdigest())
        return self._digests[commands]

    def _log_changed(self, from_index: int) -> None:
        """The log's records from `from_index` on were replaced or removed: their digests go."""
        del self._digests[from_index + 1:]

    def _take_checkpoint(self) -> None:
        if self.checkpoints is not None and not self._blocking and not self.cluster.scheduler.in_action:
            entry = self.checkpoints.take(self.cluster, self._cursor, self._log_digest(self._cursor) or "")
            if entry is not None:   # the charts' series as they stood, for a rewind to it
                with open(os.path.join(entry.path, SERIES_FILE), "w", encoding="utf-8") as f:
                    f.write(self.series.snapshot())

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
    def load_scenario(self, scenario: dict) -> Events:
        """Reset to the scenario's cluster shape and queue its steps (paused: `step` plays them)."""
        with self.lock:
            try:
                validate(scenario)
            except ScenarioError as error:
                raise HostError(f"Not a valid scenario: {error}", "INVALID_REQUEST") from None
            if len(scenario["steps"]) > MAX_SCENARIO_STEPS:
                raise HostError(f"A scenario has at most {MAX_SCENARIO_STEPS} steps", "POLICY_VIOLATION")
            shape = shape_of_scenario(scenario)
            self.reset(shape)
            for index, step in enumerate(scenario["steps"]):
                command = next(k for k in step if k not in ("expect_error", "note"))
                self._script.append(_ScriptStep(index, command, dict(step[command] or {}),
                                                bool(step.get("expect_error")), str(step.get("note") or "")))
            self._scenario_name = str(scenario.get("name", ""))
            self._scenario_steps = len(scenario["steps"])
            self._scenario_done = False
            self._last_script_step = None
            self.clock_version += 1
            return self._drain(patch=False)

    def _script_unit(self, until_time: int | None, settle: bool) -> str:
        item = self._script[0]
        if item.record is not None:          # a command step whose call is still running
            if not item.record.running:
                return self._finish_command_step(item)
            return self._plain_unit(until_time, settle)
        if item.command not in CLOCK_STEPS:
            self._script_command(item)
            return _MOVED
        if not item.started and not self._start_clock_step(item):
            return _MOVED
        nxt = self.cluster.scheduler.next_time()
        if item.command == "run" and (nxt is None or nxt > item.end_ms):
            if until_time is not None and item.end_ms > until_time:
                self._settle(until_time, settle)
                return _WAIT
            self._move_clock(item.end_ms)
            return self._finish_clock_step(item)
        if item.command == "step" and (item.remaining <= 0 or nxt is None):
            return self._finish_clock_step(item)
        if item.command == "run_until_idle" and (self.cluster.is_idle() or nxt is None or nxt > item.end_ms):
            return self._finish_clock_step(item)
        if item.command == "run_until":
            if item.seen:
                return self._finish_clock_step(item)
            if nxt is None or nxt > item.end_ms:
                match = item.args.get("match", {})
                return self._fail_script_step(item, f"no {item.args['event']} event matching {match} within "
                                                    f"{item.args.get('max_ms', 600_000)} ms", None)
        if until_time is not None and nxt > until_time:
            self._settle(until_time, settle)
            return _WAIT
        self._act()
        item.remaining -= 1
        return _ACTED

    def _start_clock_step(self, item: _ScriptStep) -> bool:
        """Fix a clock step's bounds from the current instant, as the runner does; False if it failed."""
        item.started = True
        self.clock_version += 1
        try:
            if item.command == "run":
                item.end_ms = self.now_ms + int(item.args["ms"])
            elif item.command == "step":
                item.remaining = int(item.args.get("count", 1))
            elif item.command == "run_until_idle":
                item.end_ms = self.now_ms + int(item.args.get("max_ms", 600_000))
            else:
                kind, match = item.args["event"], item.args.get("match", {})
                if kind not in ev.EVENT_TYPES:
                    raise ValueError(f"unknown event kind {kind!r}")
                item.end_ms = self.now_ms + int(item.args.get("max_ms", 600_000))

                def watch(e: ev.Event) -> None:
                    if e.kind == kind and all(getattr(e, k, None) == v for k, v in match.items()):
                        item.seen = True
                self._watchers.append(watch)
                item.watcher = watch
        except ENGINE_ERRORS as error:
            self._fail_script_step(item, _describe(error), getattr(error, "kafka_name", None))
            return False
        return True

    def _finish_clock_step(self, item: _ScriptStep) -> str:
        self._drop_watcher(item)
        self._pop_script(item)
        if item.expect_error:
            self._script_error(item, f"step {item.index} ({item.command}) was expected to fail but succeeded")
        return _MOVED

    def _fail_script_step(self, item: _ScriptStep, message: str, kafka_error: str | None) -> str:
        self._drop_watcher(item)
        self._pop_script(item)
        if item.expect_error:
            self.notices.append({"message": f"step {item.index} ({item.command}) failed as expected: {message}",
                                 "kafka_error": kafka_error, "expected": True})
        else:
            self._script_error(item, f"step {item.index} ({item.command}) failed: {message}", kafka_error)
        return _MOVED

    def _pop_script(self, item: _ScriptStep) -> None:
        if self._script and self._script[0] is item:
            self._script.popleft()
            self._last_script_step = item
            self.clock_version += 1

    def _script_command(self, item: _ScriptStep) -> None:
        item.started = True
        try:
            args = self._check_command(item.command, item.args)
        except HostError as error:
            self._fail_script_step(item, error.message, error.kafka_error)
            return
        record = self._apply_new(item.command, args, tag=item.index)
        if record.running:
            item.record = record     # the scenario waits for it, as the runner does
            self.clock_version += 1
            return
        item.record = record
        self._finish_command_step(item)

    def _finish_command_step(self, item: _ScriptStep) -> str:
        record = item.record
        if record is not None and record.error is not None:
            return self._fail_script_step(item, record.error, record.kafka_error)
        self._pop_script(item)
        if item.expect_error:
            self._script_error(item, f"step {item.index} ({item.command}) was expected to fail but succeeded")
        return _MOVED

    def _script_owns(self, record: CommandRecord) -> bool:
        return bool(self._script) and self._script[0].record is record

    def _script_error(self, item: _ScriptStep, message: str, kafka_error: str | None = None) -> None:
        """The runner would stop here: say so and drop the rest of the scenario."""
        self.notices.append({"message": f"Scenario {self._scenario_name!r} stopped: {message}",
                             "kafka_error": kafka_error, "expected": False})
        for rest in self._script:
            self._drop_watcher(rest)
        self._script.clear()
        self.clock_version += 1

    def _drop_script(self) -> None:
        for item in self._script:
            self._drop_watcher(item)
        self._script.clear()
        self._scenario_steps, self._scenario_name = 0, ""
        self._last_script_step = None

    def _drop_watcher(self, item: _ScriptStep) -> None:
        if item.watcher is not None and item.watcher in self._watchers:
            self._watchers.remove(item.watcher)
        item.watcher = None

    def _script_done_stop(self) -> Callable[[], bool]:
        had_script = bool(self._script)
        return lambda: had_script and not self._script

    def _pause_if_script_done(self) -> None:
        """The scenario has played (its name and last step stay for the page): the clock pauses."""
        if self._scenario_steps and not self._script and not self._scenario_done:
            self._scenario_done = True
            self.mode = "paused"
            self.clock_version += 1

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
    def _new_cluster(self, shape: Shape) -> tuple[Cluster, ModelTracker, BlockingCommands]:
        os.makedirs(self.root_dir, exist_ok=True)
        run_dir = os.path.join(self.root_dir, f"run-{_next_run_number(self.root_dir)}")
        self._muted = True
        try:
            cluster = Cluster(brokers=shape.brokers, data_dir=run_dir, seed=shape.seed, config=dict(shape.config),
                              truncation=shape.truncation, on_event=self._on_event)
        except (ClusterError, InvalidConfigError, ValueError, TypeError) as error:
            shutil.rmtree(run_dir, ignore_errors=True)
            raise HostError(f"Cannot build that cluster: {_describe(error)}",
                            getattr(error, "kafka_name", "INVALID_CONFIG")) from None
        finally:
            self._muted = False
        self.run_dir, self._disk = run_dir, None
        return cluster, ModelTracker(cluster), BlockingCommands(cluster.scheduler)

    def _rebuild(self) -> None:
        old = (self.cluster, self._blocking, self.run_dir)
        self.series = Series()
        older = self.tracker
        self.cluster, self.tracker, self._blocking = self._new_cluster(self.shape)
        self.tracker.adopt(older)   # the same line of time: what was truncated on it, and when
        _discard(*old)
        self._running.clear()
        for record in self.log:
            record.running = False
        self._cursor = 0

    def _restore(self, entry: Entry) -> None:
        """The cluster as checkpoint `entry` holds it (in a new run dir), its log position too. The
        running cluster goes first: no two clusters may append to files the checkpoints share
        (lab/checkpoints.py); if the restore fails, the session is rebuilt by replay instead."""
        _discard(self.cluster, self._blocking, self.run_dir)
        run_dir = os.path.join(self.root_dir, f"run-{_next_run_number(self.root_dir)}")
        try:
            cluster = self.checkpoints.restore(entry, run_dir, self._on_event)
        except Exception:  # noqa: BLE001 - a damaged checkpoint must not lose the session
            logging.getLogger(__name__).exception("lab: restoring checkpoint %s failed; replaying instead", entry.path)
            self.checkpoints.clear()
            self.cluster, self.tracker, self._blocking = self._new_cluster(self.shape)
            self.series = Series()
            self._running.clear()
            for record in self.log:
                record.running = False
            self._cursor = 0
            return
        with open(os.path.join(entry.path, SERIES_FILE), encoding="utf-8") as f:
            self.series = Series.load(f.read())
        self.cluster, self.run_dir, self._disk = cluster, run_dir, None
        older, self.tracker, self._blocking = self.tracker, ModelTracker(cluster), BlockingCommands(cluster.scheduler)
        self.tracker.adopt(older)
        self._running.clear()
        for record in self.log:
            record.running = False
        self._cursor = entry.commands

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


def _describe_step(item: _ScriptStep) -> dict[str, Any]:
    return {"index": item.index, "command": {item.command: item.args}}


def shape_of_scenario(scenario: dict) -> Shape:
    cluster = scenario.get("cluster", {})
    config = dict(cluster.get("config") or {})
    truncation = cluster.get("truncation") or config.get("truncation") or "leader-epoch"
    try:
        return Shape(int(cluster.get("brokers", 3)), int(cluster.get("seed", 0)), str(truncation), config)
    except (TypeError, ValueError) as error:
        raise HostError(f"Not a valid scenario cluster: {error}", "INVALID_REQUEST") from None


def _checked_shape(limits: Limits, shape: Shape) -> Shape:
    try:
        limits.check_brokers(shape.brokers)
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


def _describe(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    if isinstance(error, KeyError):
        text = f"missing argument {text}"
    return text


def _next_run_number(root_dir: str) -> int:
    numbers = [int(number) for name in os.listdir(root_dir) if name.startswith("run-")
               and (number := name[4:].removesuffix(".deleted")).isdigit()]   # run dirs being deleted count too
    return max(numbers, default=0) + 1


def _discard(cluster: Cluster, blocking: BlockingCommands, run_dir: str) -> None:
    try:
        blocking.abandon()
        cluster.close()
    finally:
        _delete_later(run_dir)


_TRASH: queue.SimpleQueue[str] = queue.SimpleQueue()
_TRASH_THREAD: list[threading.Thread] = []


def _delete_later(run_dir: str) -> None:
    """Delete a thrown-away run dir in the background: unlinking hundreds of files costs a rewind
    tens of milliseconds it need not wait for. It is renamed out of the way first, at once, and
    keeps its number: a new run dir never takes the old one's path."""
    if not os.path.isdir(run_dir):
        return
    trash = f"{run_dir}.deleted"
    try:
        os.rename(run_dir, trash)
    except OSError:
        shutil.rmtree(run_dir, ignore_errors=True)
        return
    _TRASH.put(trash)
    if not _TRASH_THREAD or not _TRASH_THREAD[0].is_alive():
        thread = threading.Thread(target=_empty_trash, name="lab-run-dir-deleter", daemon=True)
        _TRASH_THREAD[:] = [thread]
        thread.start()


def _empty_trash() -> None:
    while True:
        shutil.rmtree(_TRASH.get(), ignore_errors=True)


def _tree_size(path: str) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(folder, name))
            except OSError:
                pass
    return total
