"""Engine checkpoints along a session's line of time, so a rewind replays a little, not everything.

A rewind rebuilds the cluster at an earlier step by replaying the command log; from the start,
that costs as much as the session has run (seconds for an hour at 10×). The host keeps engine
checkpoints (engine.checkpoint: the whole object graph, and the data dir's files hard-linked or
copied) every CHECKPOINT_WORK_MS of engine work, and a rewind restores the nearest one at or before
its target and replays only from there. A checkpoint is taken only where the engine can be saved
and the log position is clean: between scheduler actions, with no command's call running
(lab/blocking.py: a call stack cannot be saved).

The checkpoints belong to the line of time: when a new command cuts the future off, the ones
past the cut go with it. At most MAX_CHECKPOINTS are kept: past that, every other one of the
older half is dropped — recent history stays dense, old history sparser. Replay from a
checkpoint gives the same events and bytes as replay from the start (tests/lab/test_checkpoints.py).
"""
from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass

from engine import checkpoint as engine_checkpoint
from engine.cluster import Cluster

CHECKPOINT_WORK_MS = 150.0     # engine work between two checkpoints (more if taking one costs more)
TAKE_COST_FACTOR = 4.0         # ...at least this many times what the last take cost
ENTRY_FILE = "lab-entry.json"   # the log position of a checkpoint (what the engine's meta does not know)
MAX_CHECKPOINTS = 800        # about 130 MB for a one-hour session at 10x (lab.bench); past it, older ones thin out


@dataclass(frozen=True)
class Entry:
    """A checkpoint of the cluster at `step`, with `commands` log records applied, `seq` events."""
    step: int
    commands: int
    time_ms: int
    seq: int
    path: str


class CheckpointStore:
    """With `reuse`, the checkpoints an earlier host of the session left in `directory` are kept
    when this engine can restore them (same Python and engine source) and they belong to this
    log: `reuse(k)` is the digest of the session's shape and its first k commands, which must be
    the one the checkpoint was taken with. A session reopened after it left memory (or after a
    server restart) resumes from the nearest one instead of replaying from step 0."""

    def __init__(self, directory: str, *, work_ms: float = CHECKPOINT_WORK_MS,
                 max_count: int = MAX_CHECKPOINTS, clock: Callable[[], float] = time.perf_counter,
                 reuse: Callable[[int], str] | None = None) -> None:
        self.directory = directory
        self.work_ms = work_ms
        self.max_count = max_count
        self.entries: list[Entry] = []
        self.taken = self.take_ms_total = 0
        self._clock = clock
        self._last_take_ms = 0.0
        self._work_since = 0.0
        self._next = 0
        if reuse is None:
            shutil.rmtree(directory, ignore_errors=True)
        os.makedirs(directory, exist_ok=True)
        if reuse is not None:
            self._reuse(reuse)

    def _reuse(self, digest: Callable[[int], str | None]) -> None:
        fingerprint = engine_checkpoint.fingerprint()
        for name in sorted(os.listdir(self.directory)):
            path = os.path.join(self.directory, name)
            entry, taken_with = _read_entry(path)
            if entry is None or taken_with != digest(entry.commands) or _fingerprint_of(path) != fingerprint:
                _delete(path)   # half-written, of another line of time, or of another engine
                continue
            self.entries.append(entry)
            self._next = max(self._next, int(name.split("-", 1)[0]) if name[:6].isdigit() else 0)
        self.entries.sort(key=lambda e: (e.step, e.commands))

    # -- taking ---------------------------------------------------------------------------------
    def worked(self, ms: float) -> None:
        """The engine did `ms` of work since the last call (the host measures its moves)."""
        self._work_since += ms

    def due(self) -> bool:
        return self._work_since >= max(self.work_ms, TAKE_COST_FACTOR * self._last_take_ms)

    def take(self, cluster: Cluster, commands: int, digest: str = "") -> Entry | None:
        """A checkpoint of `cluster` now (its log position: `commands` applied, `digest` of the
        shape and those commands); None if one at this step and position exists."""
        step = cluster.scheduler.steps
        if any((e.step, e.commands) == (step, commands) for e in self.entries):
            return None
        started = self._clock()
        self._next += 1
        path = os.path.join(self.directory, f"{self._next:06d}-step-{step}")
        engine_checkpoint.take(cluster, path)
        entry = Entry(step, commands, cluster.now_ms, cluster.bus.count, path)
        with open(os.path.join(path, ENTRY_FILE), "w", encoding="utf-8") as f:
            json.dump({"step": step, "commands": commands, "time_ms": entry.time_ms, "seq": entry.seq,
                       "log": digest}, f)
        self.entries.append(entry)
        self.entries.sort(key=lambda e: (e.step, e.commands))   # a rewind's replay may fill in earlier ones
        self._last_take_ms = (self._clock() - started) * 1000
        self.take_ms_total += self._last_take_ms
        self.taken += 1
        self._work_since = 0.0
        self._thin()
        return entry

    def _thin(self) -> None:
        if len(self.entries) <= self.max_count:
            return
        older, newer = self.entries[:len(self.entries) // 2], self.entries[len(self.entries) // 2:]
        keep = older[::2]
        for entry in older[1::2]:
            _delete(entry.path)
        self.entries = keep + newer

    # -- using ----------------------------------------------------------------------------------
    def nearest(self, step: int, commands: int) -> Entry | None:
        """The latest checkpoint at or before (`step`, `commands`)."""
        best = None
        for entry in self.entries:
            if entry.step <= step and entry.commands <= commands:
                best = entry
        return best

    def restore(self, entry: Entry, data_dir: str, on_event: Callable) -> Cluster:
        """The cluster of `entry`. The caller has thrown its running cluster away first: restores
        are `exclusive` (engine.checkpoint.restore), which spares copying unchanged active files."""
        cluster = engine_checkpoint.restore(entry.path, data_dir, on_event=on_event, exclusive=True)
        self._work_since = 0.0
        return cluster

    def drop_after(self, step: int, commands: int) -> None:
        """The line of time changed after (`step`, `commands`): checkpoints past it are of another."""
        kept = []
        for entry in self.entries:
            if entry.step <= step and entry.commands <= commands:
                kept.append(entry)
            else:
                _delete(entry.path)
        self.entries = kept

    def clear(self) -> None:
        for entry in self.entries:
            _delete(entry.path)
        self.entries = []
        self._work_since = 0.0

    def close(self) -> None:
        """The host goes (its session left memory): the checkpoints stay for the next one."""


def _read_entry(path: str) -> tuple[Entry | None, str | None]:
    try:
        with open(os.path.join(path, ENTRY_FILE), encoding="utf-8") as f:
            data = json.load(f)
        entry = Entry(int(data["step"]), int(data["commands"]), int(data["time_ms"]), int(data["seq"]), path)
        return entry, str(data["log"])
    except (OSError, ValueError, KeyError, TypeError):
        return None, None


def _fingerprint_of(path: str) -> str | None:
    try:
        return engine_checkpoint.Checkpoint.open(path).fingerprint
    except (engine_checkpoint.CheckpointError, OSError, ValueError, KeyError, TypeError):
        return None


def _delete(path: str) -> None:
    shutil.rmtree(path, ignore_errors=True)
