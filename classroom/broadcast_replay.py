"""A broadcast session at another step, without touching it: a watcher's `view` and `fork`.

Both start from a copy of the live session's line of time — its shape and the commands of its
current generation — taken under the host's lock in a moment (`line_of_time`). A `view` replays
that copy to step N in a scratch directory (a SessionHost of its own, no history, no checkpoints,
under one call's budgets like any replay: lab/time_travel.py) and hands back its model; the
scratch host is closed and its directory deleted. A `fork` writes the copy, cut at step N, as a
new LabSession of the watcher's: opening it replays it to that position (lab.registry.build_host),
so it is the broadcast session at that step — the engine is deterministic.
"""
from __future__ import annotations

import dataclasses
import shutil
import tempfile
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from lab.host import CommandRecord, SessionHost, Shape
from lab.host_types import CallBudgets
from lab.limits import Limits
from lab.models import LabCommand, LabSession
from lab.registry import MODEL_RECORDS_BUDGET, logged_records, shape_of


@dataclass(frozen=True)
class LineOfTime:
    """A copy of a session's shape and command log, and where its clock stood."""
    shape: Shape
    records: tuple[CommandRecord, ...]
    step: int
    time_ms: int
    name: str


def line_of_time(host: SessionHost, name: str) -> LineOfTime:
    """Copy it out of a live host (sync, in a worker thread: it takes the host's lock briefly)."""
    with host.lock:
        records = tuple(dataclasses.replace(r, args=dict(r.args), running=False, warnings=[]) for r in host.log)
        return LineOfTime(Shape(host.shape.brokers, host.shape.seed, host.shape.truncation, dict(host.shape.config)),
                          records, host.steps, host.now_ms, name)


def line_of_session(session: LabSession) -> LineOfTime:
    """The same, read from the database: a session as its worker last saved it (a learner's, for
    their instructor's copy; flush this process's journal first)."""
    records = tuple(logged_records(session))
    last = records[-1] if records else None
    step, time_ms = session.position_step, session.position_time_ms
    if last is not None and last.at_step > step:
        step, time_ms = last.at_step, last.at_time_ms
    return LineOfTime(shape_of(session), records, step, time_ms, session.name)


def upto(line: LineOfTime, step: int) -> list[CommandRecord]:
    """The commands applied at step `step`: every one logged at or before it (renumbered from 0)."""
    kept = [r for r in line.records if r.at_step <= step]
    return [dataclasses.replace(r, index=i, args=dict(r.args)) for i, r in enumerate(kept)]


@dataclass
class StepView:
    step: int
    time_ms: int
    model: dict[str, Any]
    snapshot: dict[str, Any]
    notices: list[dict[str, Any]]


def replay(line: LineOfTime, step: int, *, limits: Limits | None = None) -> StepView:
    """The session at `step`, replayed in a scratch directory (sync: run it in a thread)."""
    scratch = tempfile.mkdtemp(prefix="lab-view-")
    host = None
    try:
        host = SessionHost(scratch, line.shape, limits=limits or Limits.from_settings(), log=upto(line, step),
                           position=(step, None), history=False, checkpoints=False, budgets=CallBudgets())
        with host.lock:
            return StepView(host.steps, host.now_ms, host.model(records_budget=MODEL_RECORDS_BUDGET),
                            host.snapshot(), host.take_notices())
    finally:
        if host is not None:
            host.close()
        shutil.rmtree(scratch, ignore_errors=True)


def fork(line: LineOfTime, owner: str, name: str, step: int, time_ms: int) -> LabSession:
    """A new lab session of `owner`'s: the same shape, the commands up to `step`, its clock at
    (`step`, `time_ms`) — opening it rebuilds the broadcast session as it stood there (sync)."""
    shape = line.shape
    with transaction.atomic():
        session = LabSession.objects.create(owner=owner, name=name[:100], brokers=shape.brokers, seed=shape.seed,
                                            truncation=shape.truncation, config=dict(shape.config),
                                            position_step=step, position_time_ms=time_ms)
        LabCommand.objects.bulk_create([
            LabCommand(session=session, generation=1, index=r.index, at_step=r.at_step, at_time_ms=r.at_time_ms,
                       command=r.command, args=r.args, tag=r.tag, error=r.error or "",
                       kafka_error=r.kafka_error or "", first_seq=r.first_seq)
            for r in upto(line, step)])
    return session
