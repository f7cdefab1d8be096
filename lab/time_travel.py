"""Travelling along a lab session's line of time: rewinds, the future a command cuts off and its
undo, and the engine checkpoints that make a rewind short.

A mixin of SessionHost (lab/host.py), which owns the state it uses: the command log and its
cursor, the cluster and what follows it (tracker, blocking commands, series, history), the
checkpoint store. A position is (step, commands applied); a rewind rebuilds the cluster from the
nearest checkpoint at or before it (lab/checkpoints.py) — or from step 0 — and replays, muted, to
it. A thrown-away run dir is deleted in the background.

A replay runs under its call's budget (engine.sim.budget): one that runs out stops between two
actions — never inside a logged command — and the session lands there, short of the target, with
a notice saying so; the rest of the way is ahead on the timeline. A rewind never goes past the
furthest step this line of time has reached.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import queue
import shutil
import threading
import time
from dataclasses import dataclass

from engine.cluster import Cluster
from engine.sim import budget as call_budget
from engine.sim.budget import BudgetExceeded
from lab.blocking import BlockingCommands
from lab.checkpoints import Entry
from lab.host_types import BUDGET_EXCEEDED, CommandRecord, Events, HostError
from lab.model import ModelTracker
from lab.series import Series

SERIES_FILE = "lab-series.json"   # the charts' series, kept in each engine checkpoint's dir


@dataclass
class _Discarded:
    """A future cut off by a command: enough to put it back (`undo_discard`)."""
    at_index: int                  # the first record of the new line of time
    records: list[CommandRecord]
    furthest: int                  # how far the old line of time reached
    position: tuple[int, int]      # where the clock stood when it was cut


class TimeTravel:
    """The time-travel half of SessionHost (see the module docstring)."""

    def _cut_future(self) -> _Discarded | None:
        """Cut the commands ahead off (a command is applied here); returns what was cut, if anything."""
        cut = None
        if self._cursor < len(self.log):
            cut = self._discarded = _Discarded(self._cursor, self.log[self._cursor:],
                                               max(self._furthest, self.log[-1].at_step), self.position())
            del self.log[self._cursor:]
            self._log_changed(self._cursor)
            self.journal.cut(self._cursor)
            self.timeline_version += 1
            if self.checkpoints is not None:
                self.checkpoints.drop_after(self.steps, self._cursor)
        self._furthest = self.steps
        return cut

    def _withdraw(self, record: CommandRecord, cut: _Discarded | None, discarded: _Discarded | None,
                  furthest: int) -> None:
        """Take back a new command stopped by its call's budget, as if it had never been sent: off
        the log (the journal never saw it), the future it cut back in place, its events forgotten,
        and the cluster replayed to where it stood before it (under a budget of its own)."""
        del self.log[record.index:]
        self._log_changed(record.index)
        if cut is not None:
            self.log.extend(cut.records)
            self.journal.restored(cut.records)
        self._discarded, self._furthest = discarded, furthest
        self._forget_collected_from(record.first_seq)
        with self._spending(f"putting the cluster back before {record.command}", virtual=False):
            self._seek(record.at_step, record.at_time_ms, commands=record.index)
        self.timeline_version += 1
        self.clock_version += 1

    def _forget_collected_from(self, seq: int) -> None:
        """Events numbered `seq` and later, collected for this call, did not happen after all."""
        kept = [(event, text) for event, text in self._collected if event.seq < seq]
        self._collected_total -= len(self._collected) - len(kept)
        self._collected.clear()
        self._collected.extend(kept)
        if self._history_texts:
            del self._history_texts[max(0, seq - self._history_first):]

    def undo_discard(self) -> Events:
        """Bring back the future the last cut discarded: the commands applied since are dropped,
        the clock goes back to where the cut happened (paused), and the old future is ahead again."""
        with self.lock, self._spending("the undo", virtual=False):
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

    def rewind(self, to_step: int, after_seq: int | None = None, commands: int | None = None) -> Events:
        """Go to step `to_step` of this line of time: the state there, with every command logged at
        or before it applied — or, with `after_seq`, only those applied before event `after_seq`
        was published (the state just after that event), or with `commands`, exactly that many
        commands of the log applied (a timeline mark: just after its command). Backwards, the
        cluster is rebuilt by replay. The clock pauses, a queued scenario is dropped, and the replay's events are not
        returned (a `model` follows instead). A step beyond the furthest this line of time reached
        is refused; a replay that runs out of the call's budget lands short of `to_step` (a notice
        says where)."""
        with self.lock, self._spending("the rewind", virtual=False):
            if isinstance(to_step, bool) or not isinstance(to_step, int) or to_step < 0:
                raise HostError(f"rewind needs a step number >= 0, not {to_step!r}", "INVALID_REQUEST")
            for name, value in (("after_seq", after_seq), ("commands", commands)):
                if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 0):
                    raise HostError(f"{name} must be a whole number >= 0, not {value!r}", "INVALID_REQUEST")
            horizon = max(self._furthest, self.steps, self.log[-1].at_step if self.log else 0)
            if to_step > horizon:
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
        except BudgetExceeded as stop:
            self.notices.append({"message": f"{stop.message}: the replay stopped at step {self.steps}, short of "
                                            f"step {to_step}; the rest of the way is ahead on the timeline (step or "
                                            f"play to go on)", "kafka_error": BUDGET_EXCEEDED, "expected": False})
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
            call_budget.check()   # a logged command runs whole: stop before it, if at all
            self._move_clock(record.at_time_ms)
            self._cursor += 1
            self._run_record(record)

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
        except (Exception, BudgetExceeded):  # noqa: BLE001 - a damaged checkpoint must not lose the session
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

