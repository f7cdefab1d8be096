"""Playing a loaded scenario on a lab session's clock, as `python -m engine.scenarios run` plays it.

A mixin of SessionHost (lab/host.py), which owns the state it uses: `_script` (the queued steps),
the clock (`_advance` calls `_script_unit` while steps are queued), `_apply_new` for command
steps, `notices`. Its commands are applied and logged like any other; its clock steps (`run`,
`step`, `run_until_idle`, `run_until`) are played by the clock, action by action, and end exactly
where the runner's do, so the final state is the runner's. A command step whose call blocks (a
consumer joining) holds the scenario until it ends, as the runner waits for it. Paused, `step`
plays the next scenario step whole; live, the steps play at the clock's speed; after the last one
the clock pauses and the scenario stays shown (`done`).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine import events as ev
from engine.scenarios.runner import ScenarioError, step_command, validate
from engine.sim.budget import BudgetExceeded
from lab.host_types import (
    _ACTED,
    _MOVED,
    _WAIT,
    BUDGET_EXCEEDED,
    CLOCK_STEPS,
    ENGINE_ERRORS,
    MAX_SCENARIO_STEPS,
    CommandRecord,
    Events,
    HostError,
    Shape,
    _describe,
    _Withdrawn,
)


@dataclass
class _ScriptStep:
    """A queued scenario step; clock steps keep their progress here while they play."""
    index: int
    command: str
    args: dict
    expect_error: bool
    note: str = ""
    note_zh: str = ""              # the note in Chinese, when the scenario has one (the page picks)
    started: bool = False
    end_ms: int = 0
    remaining: int = 0
    seen: bool = False
    watcher: Callable[[ev.Event], None] | None = None
    record: CommandRecord | None = None   # a command step whose call is running


class ScenarioPlayback:
    """The scenario half of SessionHost (see the module docstring)."""

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
                command = step_command(step)
                self._script.append(_ScriptStep(index, command, dict(step[command] or {}),
                                                bool(step.get("expect_error")), str(step.get("note") or ""),
                                                note_zh=str(step.get("note_zh") or "")))
            self._scenario_name = str(scenario.get("name", ""))
            self._scenario_steps = len(scenario["steps"])
            self._scenario_done = False
            self._last_script_step = None
            self.clock_version += 1
            return self._drain(patch=False)

    # -- a lesson's beats (lessons/live.py) ----------------------------------------------------
    def stage_scenario(self, scenario: dict, steps: list[tuple[int, dict]]) -> Events:
        """A fresh cluster of the scenario's shape with `steps` (index, step) played at once: a
        lesson jumping to a beat replays what came before it (deterministic, as a rewind is)."""
        with self.lock:
            self.load_scenario({**scenario, "steps": []})
            self._queue(scenario, steps)
            self.run_script_now()
            return self._drain(patch=False)

    def queue_steps(self, scenario: dict, steps: list[tuple[int, dict]], speed: float | None = None) -> Events:
        """Queue `steps` after this moment (no reset) and let the clock play them live; it pauses
        when they have played. `speed` None: queue only (the clock stays paused)."""
        with self.lock:
            if not steps:          # a beat that only asks: the scenario stays where it stood
                return self._drain()
            self._drop_script()
            self._queue(scenario, steps)
            if speed is not None and self._script:
                return self.play(speed)
            self._pause_if_script_done()
            return self._drain()

    def run_script_now(self) -> Events:
        """Play every queued step now, as fast as the engine goes (within one call's budget)."""
        with self.lock:
            try:
                with self._spending("playing a lesson's steps"):
                    self._catch_up()
                    if self._script:
                        self._advance(stop=lambda: not self._script)
            except BudgetExceeded as stop:
                raise HostError(f"{stop.message}: the lesson's steps did not finish", BUDGET_EXCEEDED,
                                self._drain()) from None
            self._pause_if_script_done()
            self.mode = "paused"
            self.clock_version += 1
            return self._drain()

    def script_pending(self) -> bool:
        with self.lock:
            return bool(self._script)

    def _queue(self, scenario: dict, steps: list[tuple[int, dict]]) -> None:
        for index, step in steps:
            command = step_command(step)
            self._script.append(_ScriptStep(index, command, dict(step[command] or {}),
                                            bool(step.get("expect_error")), str(step.get("note") or ""),
                                            note_zh=str(step.get("note_zh") or "")))
        self._scenario_name = str(scenario.get("name", ""))
        self._scenario_steps = len(scenario.get("steps", [])) or len(steps)
        self._scenario_source = scenario      # a lesson plays it a beat at a time: the clock can say what is next
        self._scenario_done = not self._script
        self._last_script_step = None
        self.clock_version += 1

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
        try:
            record = self._apply_new(item.command, args, tag=item.index)
        except _Withdrawn as stop:   # as a failed step stops the runner, whatever expect_error says
            self._script_error(item, f"step {item.index} ({item.command}): {stop}", BUDGET_EXCEEDED)
            return
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
        self._scenario_source = None
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


def _describe_step(item: _ScriptStep) -> dict[str, Any]:
    return {"index": item.index, "command": {item.command: item.args}}


def shape_of_scenario(scenario: dict) -> Shape:
    cluster = scenario.get("cluster", {})
    config = dict(cluster.get("config") or {})
    # cluster.metadata (engine.scenarios.schema) is the engine's `metadata` setting. A scenario without
    # it runs in ZooKeeper mode (the engine's default), as the runner plays it, whatever the lab's
    # default for new sessions.
    if cluster.get("metadata"):
        config["metadata"] = cluster["metadata"]
    truncation = cluster.get("truncation") or config.get("truncation") or "leader-epoch"
    try:
        return Shape(int(cluster.get("brokers", 3)), int(cluster.get("seed", 0)), str(truncation), config)
    except (TypeError, ValueError) as error:
        raise HostError(f"Not a valid scenario cluster: {error}", "INVALID_REQUEST") from None
