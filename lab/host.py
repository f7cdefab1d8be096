"""SessionHost: one lab session's cluster, its command log and its clock — the lab's time machine.

Plain Python over the engine (no Django): `lab.registry` builds one per lab session served by
this process and calls it from worker threads; every public method takes the host's lock and
returns the engine events it caused.

What it keeps true:
- **Replay = shape + command log.** Every command that reaches the engine is logged with the
  scheduler step and the virtual time at which it was applied (a failed one too: it may have run
  the scheduler before failing, and replaying it fails the same way). Playing the log at those
  steps into a fresh cluster of the same shape (brokers, seed, truncation, config) gives the same
  events and the same bytes on disk: that is how a session is resumed after a restart and how it
  is rewound.
- **The log has a cursor.** `rewind(to)` rebuilds the cluster in a new run dir, replays up to
  step `to` (applying every command logged at or before it) and deletes the old run dir. Logged
  commands after the cursor are the *future*: moving the clock forward re-applies them at their
  steps, and a new command cuts them off — cut the future, apply, record.
- **A loaded scenario plays as `python -m engine.scenarios run` plays it.** Its commands are
  applied and logged like any other; its clock steps (`run`, `step`, `run_until_idle`,
  `run_until`) are played by the clock action by action and end exactly where the runner's do,
  so the final state is the runner's. Paused, `step` plays the next scenario step whole; live,
  the steps play at the clock's speed; when the last one has played the clock pauses.
- **Live time follows the wall clock.** Virtual time moves by the wall time since the last move
  × speed, whenever the host is called: `tick()` from the registry's clock loop, and before any
  command or clock move (so a command lands at the right virtual instant however seldom the loop
  ticks). Each move does bounded work: a busy cluster runs slower than asked rather than
  stalling the process.
"""
from __future__ import annotations

import copy
import os
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
from lab.limits import LimitExceeded, Limits, RecordRate, check_command

CLOCK_STEPS = frozenset({"run", "step", "run_until_idle", "run_until"})
MIN_SPEED, MAX_SPEED = 0.1, 10.0
MAX_EVENTS_PER_CALL = 500       # events a call hands back by default; older ones are counted, not kept
MAX_MARKS = 500                 # timeline marks sent (the newest)
MAX_SCENARIO_STEPS = 10_000
STEP_UNTIL_MAX_MS = 600_000     # as the runner's run_until: ten virtual minutes
DISK_USAGE_TTL_S = 30.0         # how long a walk of the run dir is trusted (log growth is added to it)
CATCH_UP_WORK_MS = 40.0         # wall-clock work a live clock may do to catch up before a command
ENGINE_ERRORS = (ClusterError, InvalidConfigError, ValueError, KeyError, TypeError)

# What one unit of forward motion did (see SessionHost._advance).
_ACTED, _MOVED, _WAIT = "acted", "moved", "wait"


class HostError(Exception):
    """A request the host refused or a command that failed; nothing was lost.
    `kafka_error` is Kafka's error name where one exists; `events` what happened before it failed."""

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
    """One entry of the command log: a scenario step applied at `at_step` / `at_time_ms`."""
    index: int
    at_step: int
    at_time_ms: int
    command: str
    args: dict
    tag: int            # the step number handed to the step function (the runner's "produced[].step")
    error: str | None = None
    kafka_error: str | None = None
    warnings: list[str] = field(default_factory=list, compare=False)  # the step's, when it last ran; not logged

    def mark(self) -> dict[str, Any]:
        return {"step": self.at_step, "time_ms": self.at_time_ms, "command": {self.command: self.args}}


@dataclass
class Events:
    """What one host call caused: its newest events (at most `max_events_per_call`), how many older
    ones were left out, and where the clock stood afterwards."""
    events: list[ev.Event]
    dropped: int = 0
    step: int = 0
    time_ms: int = 0
    next_due_ms: float | None = None
    behind: bool = False  # a live tick ran out of its work budget before the clock caught up
    warnings: list[str] = field(default_factory=list)  # what the applied command warned of (the ack's)


class Journal:
    """Where a host writes its log so that it outlives the process. Each method is called with the
    host's lock held, on the thread running the host, and must not call back into the host. This
    base keeps nothing (tests, benchmarks); lab.registry's keeps the log in the database."""

    def appended(self, record: CommandRecord, step: int, time_ms: int) -> None:
        """`record` was applied and logged; the clock now stands at `step` / `time_ms`."""

    def cut(self, from_index: int) -> None:
        """The records from `from_index` on (the future) are gone."""

    def restarted(self, shape: Shape) -> None:
        """A fresh cluster of `shape` with an empty log; the previous log is history."""


@dataclass
class _ScriptStep:
    """A queued scenario step; clock steps keep their progress here while they play."""
    index: int
    command: str
    args: dict
    expect_error: bool
    started: bool = False
    end_ms: int = 0
    remaining: int = 0
    seen: bool = False
    watcher: Callable[[ev.Event], None] | None = None


class SessionHost:
    def __init__(self, root_dir: str, shape: Shape, *, limits: Limits | None = None,
                 journal: Journal | None = None, log: Iterable[CommandRecord] = (),
                 position: tuple[int, int] | None = None, max_events_per_call: int = MAX_EVENTS_PER_CALL,
                 wall_clock: Callable[[], float] = time.monotonic) -> None:
        """A host for the session kept under `root_dir` (one `run-<n>` dir per rebuild). With a
        `log`, the session is resumed: the log is replayed up to `position` (step, time_ms), or
        through its last command."""
        self.root_dir = os.path.abspath(root_dir)
        self.limits = limits or Limits()
        self.journal = journal or Journal()
        self.lock = threading.RLock()
        self.mode, self.speed = "paused", 1.0
        self.timeline_version = self.clock_version = 0
        self.notices: list[dict[str, Any]] = []
        self._wall_clock = wall_clock
        self._rate = RecordRate(self.limits.max_records_per_s, wall_clock)
        self._wall_anchor, self._carry_ms = wall_clock(), 0.0
        self._collected: deque[ev.Event] = deque(maxlen=max_events_per_call)
        self._collected_total = 0
        self._muted = False
        self._watchers: list[Callable[[ev.Event], None]] = []
        self._script: deque[_ScriptStep] = deque()
        self._scenario_name = ""
        self._scenario_steps = 0
        self._disk: tuple[float, int, int] | None = None   # (when, bytes walked, live log bytes then)
        self.run_dir = ""
        self.cluster = self._new_cluster(_checked_shape(self.limits, shape))
        self.shape = shape
        self.log: list[CommandRecord] = list(log)
        self._cursor = 0
        self._furthest = 0
        if self.log:
            last = self.log[-1]
            self._seek(*(position or (last.at_step, last.at_time_ms)))
        elif position:
            self._seek(*position)

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
        """The protocol's `state`: records at most the last 200 per replica."""
        with self.lock:
            return snap.snapshot(self.cluster)

    def timeline(self) -> dict[str, Any]:
        """The protocol's `timeline`: the furthest step of this line of time and the newest marks."""
        with self.lock:
            marks = []
            for record in reversed(self.log):
                if len(marks) == MAX_MARKS:
                    break
                if record.error is None:
                    marks.append(record.mark())
            horizon = max(self.steps, self._furthest, self.log[-1].at_step if self.log else 0)
            return {"steps": horizon, "marks": marks[::-1]}

    def clock(self) -> dict[str, Any]:
        """The protocol's `clock`, and the queued scenario's progress (null when none)."""
        with self.lock:
            scenario = None
            if self._script:
                scenario = {"name": self._scenario_name, "steps": self._scenario_steps,
                            "next_step": self._script[0].index}
            return {"mode": self.mode, "speed": self.speed, "scenario": scenario}

    def take_notices(self) -> list[dict[str, Any]]:
        """Errors nobody asked for (a queued scenario step that failed), oldest first; cleared."""
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
    def apply(self, command: str, args: dict | None = None) -> Events:
        """Apply a scenario step now (cutting off any future) and log it. Raises HostError when the
        step is unknown, over a limit, or fails in the engine (then with the events it caused)."""
        with self.lock:
            args = self._check_command(command, {} if args is None else args)
            self._catch_up()
            record = self._apply_new(command, args, tag=None)
            result = self._drain()
            if record.error is not None:
                raise HostError(record.error, record.kafka_error, result)
            result.warnings = record.warnings
            return result

    def _check_command(self, command: Any, args: Any) -> dict:
        """Refuse a command before it reaches the engine or the log: an unknown or clock step,
        arguments its schema refuses (engine.scenarios.schema), a session limit. Returns the
        arguments as the schema normalised them (what is applied and logged)."""
        if not isinstance(command, str) or command not in STEPS:
            raise HostError(f"Unknown command {command!r} (known: {', '.join(sorted(set(STEPS) - CLOCK_STEPS))})",
                            "INVALID_REQUEST")
        if command in CLOCK_STEPS:
            raise HostError(f"{command!r} moves time: send a clock message (play, step, step_until) instead",
                            "INVALID_REQUEST")
        try:
            args = check_step(command, args)
        except StepArgumentError as error:
            raise HostError(str(error), error.kafka_name) from None
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
        self._run_record(record)
        self.log.append(record)
        self._cursor = len(self.log)
        self.timeline_version += 1
        self.journal.appended(record, self.steps, self.now_ms)
        return record

    def _run_record(self, record: CommandRecord) -> None:
        """Apply a logged command to the cluster; an engine error is kept on the record."""
        try:
            record.warnings = run_step(self.cluster, record.command, record.args, record.tag)
        except ENGINE_ERRORS as error:
            record.error, record.kafka_error = _describe(error), getattr(error, "kafka_name", None)
        except Exception as error:  # an engine bug: still logged, so that replay stays faithful
            record.error, record.kafka_error = f"internal error: {_describe(error)}", "UNKNOWN_SERVER_ERROR"

    def _cut_future(self) -> None:
        if self._cursor < len(self.log):
            del self.log[self._cursor:]
            self.journal.cut(self._cursor)
            self.timeline_version += 1
        self._furthest = self.steps

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
            if head.command not in CLOCK_STEPS or nxt is None:
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

    def rewind(self, to_step: int) -> Events:
        """Go to step `to_step` of this line of time: the state there, with every command logged at or
        before it applied. Backwards, the cluster is rebuilt in a new run dir by replay. The clock
        pauses, a queued scenario is dropped, and the events of the replay are not returned."""
        with self.lock:
            if isinstance(to_step, bool) or not isinstance(to_step, int) or to_step < 0:
                raise HostError(f"rewind needs a step number >= 0, not {to_step!r}", "INVALID_REQUEST")
            self._pause()
            self._drop_script()
            self.clock_version += 1
            self._furthest = max(self._furthest, self.steps)
            self._seek(to_step, None)
            self._collected.clear()
            self._collected_total = 0
            return self._drain()

    def _seek(self, to_step: int, to_time_ms: int | None) -> None:
        """Replay (muted) to `to_step`, then apply the commands due there; then, if given, let the
        clock reach `to_time_ms` (where a live clock stood between actions)."""
        if to_step < self.steps:
            self._rebuild()
        self._muted = True
        try:
            while self.steps < to_step:
                if self._advance(stop=lambda: self.steps >= to_step) is False:
                    break  # nothing left to run: the cluster is idle forever
            self._apply_due(up_to_time=to_time_ms)
            if to_time_ms is not None:
                self._move_clock(to_time_ms)
        finally:
            self._muted = False

    def _apply_due(self, up_to_time: int | None = None) -> None:
        while self._cursor < len(self.log) and self.log[self._cursor].at_step <= self.steps:
            record = self.log[self._cursor]
            if up_to_time is not None and record.at_time_ms > up_to_time:
                return
            self._move_clock(record.at_time_ms)
            self._run_record(record)
            self._cursor += 1

    # -- moving forward -----------------------------------------------------------------------
    def _advance(self, *, until_time: int | None = None, settle: bool = True, max_actions: int | None = None,
                 stop: Callable[[], bool] | None = None) -> bool | None:
        """Move forward unit by unit: a logged command that is due, a queued scenario step, or one
        scheduler action. Stops at `until_time` (virtual; with `settle` the clock is then moved
        there, as run_for does), after `max_actions` actions, or when `stop()` says so. Returns
        True if `stop` ended it, False if nothing is left to run, None if a bound did."""
        limit = self.limits.max_actions_per_call if max_actions is None else max_actions
        actions = 0
        while actions < limit:
            if stop is not None and stop():
                return True
            if self._cursor < len(self.log) and self.log[self._cursor].at_step <= self.steps:
                record = self.log[self._cursor]
                if until_time is not None and record.at_time_ms > until_time:
                    self._settle(until_time, settle)
                    return None
                self._move_clock(record.at_time_ms)
                self._run_record(record)
                self._cursor += 1
                continue
            unit = self._script_unit(until_time, settle) if self._script else self._plain_unit(until_time, settle)
            if unit == _WAIT:
                return None if self.cluster.scheduler.next_time() is not None or until_time is not None else False
            if unit == _ACTED:
                actions += 1
        return None

    def _plain_unit(self, until_time: int | None, settle: bool) -> str:
        nxt = self.cluster.scheduler.next_time()
        if nxt is None or (until_time is not None and nxt > until_time):
            self._settle(until_time, settle)
            return _WAIT
        self.cluster.step()
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
                                                bool(step.get("expect_error"))))
            self._scenario_name = str(scenario.get("name", ""))
            self._scenario_steps = len(scenario["steps"])
            self.clock_version += 1
            return self._drain()

    def _script_unit(self, until_time: int | None, settle: bool) -> str:
        item = self._script[0]
        if item.command not in CLOCK_STEPS:
            self._script.popleft()
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
        self.cluster.step()
        item.remaining -= 1
        return _ACTED

    def _start_clock_step(self, item: _ScriptStep) -> bool:
        """Fix a clock step's bounds from the current instant, as the runner does; False if it failed."""
        item.started = True
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
        self._script.popleft()
        if item.expect_error:
            self._script_error(item, f"step {item.index} ({item.command}) was expected to fail but succeeded")
        return _MOVED

    def _fail_script_step(self, item: _ScriptStep, message: str, kafka_error: str | None) -> str:
        self._drop_watcher(item)
        if self._script and self._script[0] is item:
            self._script.popleft()
        if item.expect_error:
            self.notices.append({"message": f"step {item.index} ({item.command}) failed as expected: {message}",
                                 "kafka_error": kafka_error, "expected": True})
        else:
            self._script_error(item, f"step {item.index} ({item.command}) failed: {message}", kafka_error)
        return _MOVED

    def _script_command(self, item: _ScriptStep) -> None:
        try:
            item.args = self._check_command(item.command, item.args)
        except HostError as error:
            self._fail_script_step(item, error.message, error.kafka_error)
            return
        record = self._apply_new(item.command, item.args, tag=item.index)
        if record.error is not None:
            self._fail_script_step(item, record.error, record.kafka_error)
        elif item.expect_error:
            self._script_error(item, f"step {item.index} ({item.command}) was expected to fail but succeeded")

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

    def _drop_watcher(self, item: _ScriptStep) -> None:
        if item.watcher is not None and item.watcher in self._watchers:
            self._watchers.remove(item.watcher)
        item.watcher = None

    def _script_done_stop(self) -> Callable[[], bool]:
        had_script = bool(self._script)
        return lambda: had_script and not self._script

    def _pause_if_script_done(self) -> None:
        if self._scenario_steps and not self._script:
            self._scenario_steps, self._scenario_name = 0, ""
            self.mode = "paused"
            self.clock_version += 1

    # -- reset --------------------------------------------------------------------------------
    def reset(self, shape: Shape) -> Events:
        """A fresh cluster of `shape` in a new run dir, with an empty log; the clock pauses."""
        with self.lock:
            shape = _checked_shape(self.limits, shape)
            old_cluster, old_dir = self.cluster, self.run_dir
            self.cluster = self._new_cluster(shape)  # raises HostError, keeping the old one
            _discard(old_cluster, old_dir)
            self.shape = shape
            self.log, self._cursor, self._furthest = [], 0, 0
            self._drop_script()
            self.mode = "paused"
            self.clock_version += 1
            self.timeline_version += 1
            self.journal.restarted(shape)
            return self._drain()

    def close(self) -> None:
        """Shut the cluster down and delete its run dir (the log, kept by the journal, remains)."""
        with self.lock:
            _discard(self.cluster, self.run_dir)

    # -- internals ----------------------------------------------------------------------------
    def _new_cluster(self, shape: Shape) -> Cluster:
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
        return cluster

    def _rebuild(self) -> None:
        old_cluster, old_dir = self.cluster, self.run_dir
        self.cluster = self._new_cluster(self.shape)
        _discard(old_cluster, old_dir)
        self._cursor = 0

    def _on_event(self, event: ev.Event) -> None:
        if not self._muted:
            self._collected.append(event)
            self._collected_total += 1
        for watcher in self._watchers:
            watcher(event)

    def _drain(self) -> Events:
        events = list(self._collected)
        dropped = self._collected_total - len(events)
        self._collected.clear()
        self._collected_total = 0
        return Events(events, dropped, self.steps, self.now_ms)


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
    numbers = [int(name[4:]) for name in os.listdir(root_dir) if name.startswith("run-") and name[4:].isdigit()]
    return max(numbers, default=0) + 1


def _discard(cluster: Cluster, run_dir: str) -> None:
    try:
        cluster.close()
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)


def _tree_size(path: str) -> int:
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += os.path.getsize(os.path.join(folder, name))
            except OSError:
                pass
    return total
