"""The lab sessions this process serves: one SessionHost each, the tabs watching it, its live
clock and the frames it sends.

- A session's host is built on first use from the database — the shape and the command log of
  its current generation, replayed up to the saved clock position — so a session resumes after a
  restart exactly as it was (`build_host`). Django's models are used here and in the views,
  never in lab.host.
- Every host call runs in a worker thread (`asyncio.to_thread`) under the session's asyncio lock:
  a busy cluster never stalls the event loop or another session, and one session's calls run
  one at a time. Nothing on the event loop touches a host directly. Live clocks are the one
  exception to "a thread hop per call": lab.live_clock ticks every live session in shared rounds.
- Frames go straight to the session's tabs (the consumers attached here), as JSON text made once
  for all of them — not through a channel-layer group: a session's host and its tabs live in one
  process anyway, and the layer's per-message hops (copy, queue, dispatch, a thread hop to close
  DB connections) cost more than the rest of a frame. `events` frames are coalesced as
  docs/lab-protocol.md says: at most one per KAFKA_LAB_FRAME_INTERVAL_MS, at most
  KAFKA_LAB_MAX_EVENTS_PER_FRAME events (the newest), and after one that left events out a
  `state` (at most one per KAFKA_LAB_STATE_INTERVAL_MS).
- The command log is written by one background thread (JournalWriter), in order, in batches: a
  command is answered without waiting for a database commit.
- A session nobody watches is paused at once and dropped from memory after
  KAFKA_LAB_IDLE_HOST_TTL_S; at most KAFKA_LAB_MAX_HOSTS stay in memory (the longest idle go
  first). One process serves a session; with several worker processes (a shared channel layer)
  lab.placement says which, and lab.tunnel relays other workers' sockets to it
  (docs/placement.md). Then a command's `ack` waits for its journal row to commit
  (KAFKA_LAB_DURABLE_ACKS): another worker rebuilding the session after a crash finds every
  acknowledged command.
"""
from __future__ import annotations

import asyncio
import copy
import functools
import json
import logging
import queue
import shutil
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from lab import fairness, journal_checks
from lab.host import CommandRecord, Events, HostError, Journal, SessionHost, Shape
from lab.limits import Limits
from lab.live_clock import live_clock
from lab.models import LabCommand, LabSession

logger = logging.getLogger(__name__)

PROTOCOL_VERSION = 2
POSITION_SAVE_INTERVAL_S = 5.0
MAX_MESSAGE_BYTES = 900 * 1024        # Daphne (autobahn) refuses to send a message over 1 MiB
FRAME_EVENT_BYTES = 600 * 1024        # events per frame, as JSON (the newest that fit)
MAX_PATCH_BYTES = 512 * 1024          # one call's patch; a bigger one is sent as a whole model
MODEL_RECORDS_BUDGET = 6000           # records in a whole model (over all replicas)
BATCH_WAIT_S = 0.02  # the journal writer's wait for more writes before a commit


def session_dir(session_id: uuid.UUID) -> Path:
    return Path(settings.KAFKA_LAB_DATA_DIR) / str(session_id)


def message(kind: str, **fields: Any) -> dict[str, Any]:
    return {"v": PROTOCOL_VERSION, "type": kind, **fields}


# -- the database side ------------------------------------------------------------------------
class JournalWriter:
    """One thread that writes the sessions' logs to the database, in order, a batch per
    transaction: new command rows in one insert, one position update per session. The writes of
    BATCH_WAIT_S go into one commit. A command is answered without waiting for the disk; a crash
    of the process may lose the last fraction of a second of the log. One bad write never costs
    another's: each is checked against its columns first (lab.journal_checks), and a batch that
    fails anyway is written again one write at a time, so only the write refused is lost (logged)."""

    MAX_BATCH = 1000

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[_Write] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._start_lock = threading.Lock()
        self._flush_wanted = threading.Event()   # someone waits for the batch: commit it now

    def submit(self, write: _Write) -> None:
        """Queue a write: a LabCommand row to insert, a `_Position`, or any callable."""
        with self._start_lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._run, name="lab-journal-writer", daemon=True)
                self._thread.start()
        self._queue.put(write)

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until everything submitted so far is written."""
        if self._thread is None:
            return
        done = threading.Event()
        self._queue.put(done)
        self._flush_wanted.set()   # no gathering wait for a batch somebody waits on (a durable ack)
        done.wait(timeout)

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            if not isinstance(batch[0], threading.Event):
                # Let the writes of this moment gather: one commit for them all — unless a flush waits.
                self._flush_wanted.wait(BATCH_WAIT_S)
            self._flush_wanted.clear()
            while len(batch) < self.MAX_BATCH:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            try:
                _write_all(_checked([w for w in batch if not isinstance(w, threading.Event)]))
            finally:
                for marker in batch:
                    if isinstance(marker, threading.Event):
                        marker.set()


def _checked(writes: list[_Write]) -> list[_Write]:
    """The writes whose values every column takes (lab.journal_checks); each other one is logged
    and dropped, alone, before it can roll back the rows of other sessions batched with it."""
    kept = []
    for write in writes:
        problem = _problem(write)
        if problem is None:
            kept.append(write)
        else:
            logger.error("lab journal: dropped %s of session %s: %s", _kind_of(write),
                         getattr(write, "session_id", "?"), problem)
    return kept


def _write_all(writes: list[_Write]) -> None:
    """One transaction for them all; if it fails anyway (a unique index, a locked database, a
    value no check foresaw), each write again in a transaction of its own, so that only the one
    the database refuses is lost (and logged)."""
    if not writes:
        return
    try:
        with transaction.atomic():
            _write_batch(writes)
        return
    except Exception:  # noqa: BLE001 - the writer must outlive one bad batch
        logger.warning("lab journal: a batch of %d writes failed; writing them one by one", len(writes),
                       exc_info=True)
        connection.close()
    for write in writes:
        try:
            with transaction.atomic():
                _write_batch([write])
        except Exception:  # noqa: BLE001 - one write lost, the others kept
            logger.exception("lab journal: dropped %s of session %s", _kind_of(write),
                             getattr(write, "session_id", "?"))
            connection.close()


@dataclass(frozen=True)
class _Position:
    session_id: uuid.UUID
    step: int
    time_ms: int


@dataclass(frozen=True)
class _Restart:
    """A reset: the session's new generation and shape; the old shape goes to its history."""
    session_id: uuid.UUID
    generation: int
    shape: Shape

    def row(self, session: LabSession) -> LabSession:
        session.history = [*session.history, {"generation": session.generation, "brokers": session.brokers,
                                              "seed": session.seed, "truncation": session.truncation,
                                              "config": session.config}]
        session.generation = self.generation
        session.brokers, session.seed = self.shape.brokers, self.shape.seed
        session.truncation, session.config = self.shape.truncation, dict(self.shape.config)
        session.position_step = session.position_time_ms = 0
        return session

    def __call__(self) -> None:
        self.row(LabSession.objects.select_for_update().get(pk=self.session_id)).save()


_Write = Callable[[], None] | LabCommand | _Position | _Restart | threading.Event


def _problem(write: _Write) -> str | None:
    """What a column would refuse in `write` (None: nothing, or a write that cannot be checked ahead)."""
    if isinstance(write, LabCommand):
        return journal_checks.problem_of(write)
    if isinstance(write, _Position):
        return (journal_checks.integer_problem(write.step, *journal_checks.BIGINT)
                or journal_checks.integer_problem(write.time_ms, *journal_checks.BIGINT))
    if isinstance(write, _Restart):
        return journal_checks.problem_of(write.row(LabSession(id=write.session_id, owner="-", name="-")))
    return None


def _kind_of(write: _Write) -> str:
    if isinstance(write, LabCommand):
        return f"command #{write.index} ({write.command})"
    return {_Position: "a clock position", _Restart: "a reset"}.get(type(write), "a write")


def _write_batch(writes: list[_Write]) -> None:
    """Apply `writes` in order; runs of rows and positions are grouped (rows inserted together,
    only the last position of each session written)."""
    rows: list[LabCommand] = []
    positions: dict[uuid.UUID, _Position] = {}

    def flush_group() -> None:
        if rows:
            _insert_commands(rows)
            rows.clear()
        if positions:
            _update_positions(list(positions.values()))
            positions.clear()
    for write in writes:
        if isinstance(write, LabCommand):
            rows.append(write)
        elif isinstance(write, _Position):
            positions[write.session_id] = write
        else:
            flush_group()
            write()
    flush_group()


def _insert_commands(rows: list[LabCommand]) -> None:
    """One INSERT sent with executemany, each value prepared by its model field (JSON for `args`,
    the UUID's database form): bulk_create's SQL compiler cost several times the insert itself."""
    meta = LabCommand._meta
    fields = [f for f in meta.concrete_fields if f is not meta.pk]
    quote = connection.ops.quote_name
    sql = (f"INSERT INTO {quote(meta.db_table)} ({', '.join(quote(f.column) for f in fields)}) "
           f"VALUES ({', '.join(['%s'] * len(fields))})")
    with connection.cursor() as cursor:
        cursor.executemany(sql, [[f.get_db_prep_save(getattr(row, f.attname), connection) for f in fields]
                                 for row in rows])


def _update_positions(positions: list[_Position]) -> None:
    """One plain UPDATE per session, sent with executemany: QuerySet.bulk_update builds a CASE
    expression per field through the ORM, which cost a third of a busy server's CPU."""
    meta = LabSession._meta
    fields = [meta.get_field(name) for name in ("position_step", "position_time_ms", "updated", "id")]
    quote = connection.ops.quote_name
    sql = (f"UPDATE {quote(meta.db_table)} SET "
           + ", ".join(f"{quote(f.column)} = %s" for f in fields[:3]) + f" WHERE {quote(fields[3].column)} = %s")
    now = fields[2].get_db_prep_value(timezone.now(), connection)
    with connection.cursor() as cursor:
        cursor.executemany(sql, [(p.step, p.time_ms, now, fields[3].get_db_prep_value(p.session_id, connection))
                                 for p in positions])


journal_writer = JournalWriter()


class DatabaseJournal(Journal):
    """Keeps a host's command log in LabCommand rows and its shape and position in LabSession;
    through `writer` (in order, in the background), or at once when there is none."""

    def __init__(self, session_id: uuid.UUID, generation: int, writer: JournalWriter | None = None) -> None:
        self.session_id = session_id
        self.generation = generation
        self._writer = writer

    def _write(self, write: _Write) -> None:
        if self._writer is not None:
            self._writer.submit(write)
        else:
            _write_all(_checked([write]))

    def _row(self, record: CommandRecord) -> LabCommand:
        return LabCommand(session_id=self.session_id, generation=self.generation, index=record.index,
                          at_step=record.at_step, at_time_ms=record.at_time_ms, command=record.command,
                          args=copy.deepcopy(record.args), tag=record.tag, error=record.error or "",
                          kafka_error=record.kafka_error or "", first_seq=record.first_seq)

    def appended(self, record: CommandRecord, step: int, time_ms: int) -> None:
        self._write(self._row(record))
        self._write(_Position(self.session_id, step, time_ms))

    def finished(self, record: CommandRecord) -> None:
        generation, index = self.generation, record.index
        error, kafka_error = record.error or "", record.kafka_error or ""
        self._write(lambda: LabCommand.objects.filter(session_id=self.session_id, generation=generation,
                                                      index=index).update(error=error, kafka_error=kafka_error))

    def restored(self, records: list[CommandRecord]) -> None:
        for record in records:
            self._write(self._row(record))

    def cut(self, from_index: int) -> None:
        generation = self.generation
        self._write(lambda: LabCommand.objects.filter(session_id=self.session_id, generation=generation,
                                                      index__gte=from_index).delete())

    def restarted(self, shape: Shape) -> None:
        self.generation += 1
        self._write(_Restart(self.session_id, self.generation, shape))

    def positioned(self, step: int, time_ms: int) -> None:
        """Where the clock stands (saved when a tab leaves, and every few seconds while live)."""
        self._write(_Position(self.session_id, step, time_ms))


def save_position(session_id: uuid.UUID, step: int, time_ms: int) -> None:
    LabSession.objects.filter(pk=session_id).update(position_step=step, position_time_ms=time_ms,
                                                    updated=timezone.now())


def shape_of(session: LabSession) -> Shape:
    return Shape(session.brokers, session.seed, session.truncation, dict(session.config or {}))


def logged_records(session: LabSession) -> list[CommandRecord]:
    """The command log of the session's current generation, as the database holds it."""
    return [CommandRecord(c.index, c.at_step, c.at_time_ms, c.command, c.args, c.tag,
                          c.error or None, c.kafka_error or None, c.first_seq)
            for c in session.commands.filter(generation=session.generation).order_by("index")]


def build_host(session_id: uuid.UUID, *, limits: Limits | None = None,
               writer: JournalWriter | None = None) -> tuple[SessionHost, dict[str, Any]]:
    """Rebuild a session's host by replaying its log into a fresh run dir (sync: run it in a thread).
    Its journal writes through `writer`, or at once. Returns the host and the protocol's `hello.session`."""
    if writer is not None:
        writer.flush()  # an earlier host of this session may still have writes on the way
    session = LabSession.objects.get(pk=session_id)
    records = logged_records(session)
    position = (session.position_step, session.position_time_ms) if session.position_step else None
    root = session_dir(session_id)
    for leftover in root.glob("run-*") if root.exists() else []:
        shutil.rmtree(leftover, ignore_errors=True)  # left by an earlier process: this host replays anew
    host = SessionHost(str(root), shape_of(session), limits=limits or Limits.from_settings(),
                       journal=DatabaseJournal(session_id, session.generation, writer), log=records, position=position,
                       max_events_per_call=settings.KAFKA_LAB_MAX_EVENTS_PER_FRAME)
    return host, session.info()


# -- one session in this process --------------------------------------------------------------
@dataclass
class Outcome:
    """What a host call left for the tabs, gathered in the worker thread under the host's lock:
    its events and model patch already as JSON texts (made there, off the event loop), and what
    else changed."""
    result: Events
    texts: list[str] = field(default_factory=list)
    patch: str | None = None        # the model patch, as JSON
    error: HostError | None = None
    notices: list[dict[str, Any]] = field(default_factory=list)
    finished: list[dict[str, Any]] = field(default_factory=list)   # running commands that ended
    timeline: dict[str, Any] | None = None
    clock: dict[str, Any] | None = None
    model: str | None = None        # a whole model (JSON), taken right after this call, when one was wanted
    series: str | None = None       # the charts' series (JSON), with a whole model
    model_for_all: bool = False     # ...as a `state` for every tab (else for the caller: a hello or a resync)
    mode: str = "paused"
    position: tuple[int, int] = (0, 0)
    seq: int = 0


def _nothing() -> None:
    """A host call that does nothing (to take a model between two calls)."""


class Tab(Protocol):
    """A browser tab's socket, as LiveSession sees it (lab.consumers.LabConsumer)."""

    async def deliver(self, text: str) -> None:
        """Send one message (JSON text) to the browser."""

    async def end(self, code: int) -> None:
        """Close the socket with `code`."""


class LiveSession:
    """One lab session served by this process: its host, its tabs and the stream they are sent.

    The stream (docs/lab-protocol.md): every message that changes the model — an `events` frame,
    which carries the model patches of the host calls it covers, or a `state` after a rewind —
    has the next `frame` number, so a tab that misses one knows it and asks for a `state`. Events
    wait in `_pending` until a frame is due (at most one per frame interval); any other message
    first seals them into a frame, so that `_outbox` keeps the engine's order. No message goes
    over MAX_MESSAGE_BYTES (Daphne refuses to send more than 1 MiB): a frame keeps at most
    FRAME_EVENT_BYTES of events (the newest; the rest are counted in `coalesced` — the model is
    exact all the same), and patches that do not fit go in frames of their own."""

    visitor: str | None = None   # who owns it (lab.fairness: their caps and their share of tick time)
    broadcast: Any = None        # classroom.broadcast.BroadcastState while an instructor broadcasts it
    pointer: dict[str, Any] | None = None   # what the instructor points at (a `pointer` message's target)

    def __init__(self, session_id: uuid.UUID, host: SessionHost, info: dict[str, Any]) -> None:
        self.session_id = session_id
        self.host = host
        self.info = info
        self.sockets: set[Tab] = set()
        self.idle_since: float | None = time.monotonic()
        self.closed = False
        self.mode = host.mode
        self.lock = asyncio.Lock()           # one host call at a time
        self.frame_interval = settings.KAFKA_LAB_FRAME_INTERVAL_MS / 1000
        self.last_tick = 0.0                 # when the live clock last ticked it (monotonic)
        self._state_interval = settings.KAFKA_LAB_STATE_INTERVAL_MS / 1000
        self._pending: deque[str] = deque(maxlen=settings.KAFKA_LAB_MAX_EVENTS_PER_FRAME)
        self._pending_total = 0
        self._pending_patches: list[str] = []
        self._pending_actions = 0            # scheduler actions the waiting frame covers
        self._urgent = False                 # a learner's own action waits: send its frame at once
        self._last_action: str | None = None
        self._outbox: deque[tuple[str, frozenset[Tab] | None]] = deque()  # (text, to whom: None = every tab)
        self._timeline: dict[str, Any] | None = None
        self._position = host.position()
        self._seq = 0
        self._sent_position: tuple[int, int] | None = self._position
        self.frame = 0                       # the number of the last model-changing message sealed
        self._timeline_version = host.timeline_version
        self._clock_version = host.clock_version
        self._last_frame = self._last_timeline = 0.0
        self._follow_up: asyncio.TimerHandle | None = None
        self._wake: asyncio.Event | None = None
        self._pump_task: asyncio.Task | None = None
        self._last_saved = time.monotonic()

    # -- calls --------------------------------------------------------------------------------
    async def call(self, fn: Callable[..., Events | None], *args: Any, model: str | None = None,
                   urgent: bool = False) -> Outcome:
        """Run `fn(*args)` (a host method) in a worker thread under this session's lock and send
        what it caused: events and patches (in frames), a changed timeline or clock, notices.
        With `model` ("all" or "caller") the outcome holds the whole model taken after the call:
        sent as a `state` to every tab ("all"), or left to the caller (a hello, a resync).
        Raises HostError after sending the events of a failed command."""
        async with self.lock:
            if self.closed:
                raise HostError("This lab session is no longer open here", None)
            async with fairness.call_slot(self.visitor):   # worker threads are shared: a visitor takes a few
                outcome = await asyncio.to_thread(self._run, fn, args, model)
            self._urgent = self._urgent or urgent
            self.publish(outcome)
        live_clock.poke(self)  # it caught the clock up; something may be due sooner now
        if outcome.error is not None:
            raise outcome.error
        return outcome

    def _run(self, fn: Callable[..., Events | None], args: tuple, model: str | None) -> Outcome:
        host = self.host
        with host.lock:
            try:
                outcome = Outcome(fn(*args) or Events([]))
            except HostError as error:
                outcome = Outcome(error.events, error=error)
            result = outcome.result
            outcome.texts = result.texts
            outcome.notices = host.take_notices()
            outcome.finished = [{"index": r.index, "command": r.command, "error": r.error,
                                 "kafka_error": r.kafka_error, "warnings": r.warnings} for r in host.finished]
            host.finished.clear()
            outcome.mode, outcome.position, outcome.seq = host.mode, host.position(), result.seq
            now = time.monotonic()
            if host.timeline_version != self._timeline_version and (
                    model or now - self._last_timeline >= self._state_interval):
                self._timeline_version, self._last_timeline = host.timeline_version, now
                outcome.timeline = fit_timeline(host.timeline())
            if host.clock_version != self._clock_version:
                self._clock_version = host.clock_version
                outcome.clock = host.clock()
            if result.patch is not None:
                outcome.patch = json.dumps(result.patch)
                if len(outcome.patch) > MAX_PATCH_BYTES:   # too big for one message: send the model anew
                    outcome.patch, model = None, model or "all"
            if outcome.error is None and (model in ("all", "caller") or (model is None and result.model_reset)):
                for_all = model != "caller"
                outcome.model = json.dumps(host.model(records_budget=MODEL_RECORDS_BUDGET, baseline=for_all))
                outcome.series = json.dumps(host.series.to_dict())
                outcome.model_for_all = for_all
                if for_all:
                    outcome.patch = None   # the model supersedes it
        return outcome

    def publish(self, outcome: Outcome) -> None:
        """Queue what a call caused, in order (no await: nothing can come in between)."""
        self.mode, self._position, self._seq = outcome.mode, outcome.position, outcome.seq
        if outcome.texts or outcome.result.dropped:
            self._pending.extend(outcome.texts)
            self._pending_total += len(outcome.texts) + outcome.result.dropped
        if outcome.patch is not None:
            self._pending_patches.append(outcome.patch)
        if outcome.result.actions:
            self._pending_actions += outcome.result.actions
            self._last_action = outcome.result.last_action
        if outcome.timeline is not None:
            self._timeline = outcome.timeline
        if outcome.model is not None and outcome.model_for_all:
            self._seal()
            self.frame += 1
            self._outbox.append((state_frame(outcome.model, self.frame, *self._position, self._seq, outcome.series),
                                 None))
            self._sent_position = self._position
        if outcome.clock is not None:
            self._post(json.dumps(message("clock", **outcome.clock)))
        for done in outcome.finished:
            self._post(json.dumps(message("command_done", **done)))
        for notice in outcome.notices:
            self._post(json.dumps(message("error", message=notice["message"], kafka_error=notice["kafka_error"])))
        self._wake_pump()
        if self.wants_clock():
            live_clock.want(self)

    def post(self, kind: str, **fields: Any) -> None:
        """Send a message to every tab of the session, after the frames before it (a `pointer`)."""
        self._post(json.dumps(message(kind, **fields)))
        self._wake_pump()

    # -- the protocol's operations ---------------------------------------------------------------
    async def join(self, tab: Tab) -> None:
        """A new tab: `hello` first (the session, its model, timeline and clock), then every frame
        after that model — none from before it."""
        async with self.lock:
            if self.closed:
                raise HostError("This lab session is no longer open here", None)
            self._seal()   # what is sealed now goes to the tabs already here; the hello's model includes it
            hello = await asyncio.to_thread(self._hello, False)
            everyone = frozenset(self.sockets)
            self._outbox = deque((text, everyone if to is None else to) for text, to in self._outbox)
            self.sockets.add(tab)
            self.idle_since = None
        # No await between adding the tab and this send: no frame can reach it before its hello.
        # Frames sealed later may repeat changes the hello shows already (harmless: lab.model).
        await tab.deliver(hello)

    def _hello(self, baseline: bool) -> str:
        """A `hello` at the current frame (taken in a worker thread, under the session's lock)."""
        host = self.host
        with host.lock:
            self.info = {**self.info, **_shape_info(host)}
            history = host.history
            model = json.dumps(host.model(records_budget=MODEL_RECORDS_BUDGET, baseline=baseline))
            return hello_frame(self.info, model, self.frame, fit_timeline(host.timeline(), HELLO_TIMELINE_BYTES),
                               host.clock(),
                               history.bounds() if history is not None else None, host.series.to_dict())

    async def command(self, command: str, args: dict, *, discard_future: bool = False) -> Outcome:
        outcome = await self.call(functools.partial(self.host.apply, discard_future=discard_future), command, args,
                                  urgent=True)
        if settings.KAFKA_LAB_DURABLE_ACKS:
            await self.durable()
        return outcome

    async def durable(self) -> None:
        """Wait until the journal holds everything this session did so far, its clock position
        included (KAFKA_LAB_DURABLE_ACKS: a command is acknowledged only then, so a worker's crash
        loses nothing acknowledged — docs/placement.md)."""
        self._save_position()
        await asyncio.to_thread(journal_writer.flush)

    async def rewind(self, to_step: int, after_seq: int | None = None, commands: int | None = None) -> None:
        """Rewind; a `state` follows (the replay's events are not sent)."""
        await self.call(self.host.rewind, to_step, after_seq, commands, model="all")

    async def undo_discard(self) -> None:
        await self.call(self.host.undo_discard, model="all")

    async def reset(self, shape: Shape) -> None:
        await self._restart(self.host.reset, shape)

    async def load_scenario(self, scenario: dict) -> None:
        await self._restart(self.host.load_scenario, scenario)

    async def stage_scenario(self, scenario: dict, steps: list[tuple[int, dict]]) -> None:
        """A fresh cluster of the scenario's shape with `steps` played at once (a lesson's beat)."""
        await self._restart(functools.partial(self.host.stage_scenario, scenario), steps)

    async def _restart(self, fn: Callable[..., Events], arg: Any) -> None:
        """A new line of time: every tab gets a new `hello` (the session's shape changed too)."""
        async with self.lock:
            if self.closed:
                raise HostError("This lab session is no longer open here", None)
            self._seal()
            outcome = await asyncio.to_thread(self._run, fn, (arg,), "hello")
            if outcome.error is not None:
                self.publish(outcome)
                raise outcome.error
            self._pending.clear()
            self._pending_total = 0
            self._pending_patches.clear()
            self.mode, self._position, self._seq = outcome.mode, outcome.position, outcome.seq
            self.frame += 1
            hello = await asyncio.to_thread(self._hello, True)
            self._outbox.append((hello, None))
            self._sent_position = self._position
            self._wake_pump()
        live_clock.poke(self)

    async def state_text(self) -> str:
        """A `state` message for one tab that asked (it resynchronises to the current frame)."""
        outcome = await self.call(_nothing, model="caller")
        return state_frame(outcome.model, self.frame, *outcome.position, outcome.seq, outcome.series)

    async def resync_texts(self, whole: bool) -> tuple[list[str], int]:
        """What a tab whose queue dropped messages gets instead (lab.send_queue): a `state` with
        the clock and the timeline — or, `whole`, a `hello` (a dropped hello announced a new line
        of time) — and the frame number they stand at."""
        if whole:
            async with self.lock:
                if self.closed:
                    raise HostError("This lab session is no longer open here", None)
                self._seal()
                return [await asyncio.to_thread(self._hello, False)], self.frame
        state = await self.state_text()
        frame = self.frame

        def clock_and_timeline() -> list[str]:
            with self.host.lock:
                return [json.dumps(message("clock", **self.host.clock())),
                        json.dumps(message("timeline", **fit_timeline(self.host.timeline())))]
        return [state, *await asyncio.to_thread(clock_and_timeline)], frame

    async def history_page(self, before_seq: int | None, limit: int, internal: bool, network: bool,
                           kinds: list[str] | None) -> dict[str, Any]:
        """Older events, from the session's history on disk (a reload's event log)."""
        def page() -> dict[str, Any]:
            with self.host.lock:
                history = self.host.history
                if history is None:
                    return {"events": [], "more": False, "first_seq": 0, "next_seq": 0}
                return history.page(before_seq, limit, internal=internal, network=network, kinds=kinds)
        async with self.lock:
            return await asyncio.to_thread(page)

    async def save_position(self) -> None:
        self._save_position()

    def _save_position(self) -> None:
        journal = self.host.journal
        if isinstance(journal, DatabaseJournal):
            journal.positioned(*self._position)
        self._last_saved = time.monotonic()

    # -- the live clock (lab.live_clock moves every live session's clock) -----------------------
    def wants_clock(self) -> bool:
        return self.mode == "live" and bool(self.sockets) and not self.closed

    def busy(self) -> bool:
        """A host call is running or waiting (its end pokes the live clock)."""
        return self.lock.locked()

    def tick_in_thread(self, work_ms: float) -> Outcome:
        """A live tick, run by the live clock in its worker thread while it holds `lock` — unless
        this session's visitor has spent their share of tick time (lab.fairness.TickShares): then
        the clock stands still this round (it catches up, within its work budget, later), so one
        visitor's many busy clusters cannot make a round, and other visitors' calls, wait."""
        started = time.perf_counter()
        if not fairness.tick_shares.may_tick(self.visitor, fairness.tick_share(), time.monotonic()):
            return self._run(_nothing, (), None)
        try:
            return self._run(self.host.tick, (None, work_ms), None)
        finally:
            fairness.tick_shares.spent(self.visitor, time.perf_counter() - started)

    def save_position_if_due(self) -> None:
        if time.monotonic() - self._last_saved > POSITION_SAVE_INTERVAL_S:
            self._save_position()

    async def clock_failed(self) -> None:
        """A tick raised something unexpected (logged): tell the tabs, pause."""
        self._post(json.dumps(message("error", message="The live clock failed; it is paused (see the server log)",
                                      kafka_error="UNKNOWN_SERVER_ERROR")))
        self._wake_pump()
        try:
            await self.call(self.host.pause)
        except Exception:  # noqa: BLE001 - already reported
            self.mode = "paused"

    # -- frames ---------------------------------------------------------------------------------
    def _post(self, text: str) -> None:
        """Queue a message after the events before it."""
        self._seal()
        self._outbox.append((text, None))

    def _seal(self) -> None:
        """Turn what waits — events, patches, a moved clock — into `events` frames (and the
        timeline after them, if it changed). Patches never wait for a frame's event budget: those
        that do not fit with the events go first, in frames of their own."""
        if self._pending or self._pending_total or self._pending_patches or self._position != self._sent_position:
            texts = list(self._pending)
            kept, size = [], 0
            for text in reversed(texts):   # the newest events that fit
                if size + len(text) + 2 > FRAME_EVENT_BYTES:
                    break
                kept.append(text)
                size += len(text) + 2
            kept.reverse()
            coalesced = self._pending_total - len(kept)
            groups = _patch_groups(self._pending_patches, MAX_MESSAGE_BYTES - FRAME_EVENT_BYTES - 4096)
            for patches in groups[:-1]:
                self.frame += 1
                self._outbox.append((events_frame([], 0, *self._position, self._seq, self.frame, patches), None))
            self.frame += 1
            self._outbox.append((events_frame(kept, coalesced, *self._position, self._seq, self.frame, groups[-1],
                                              self._pending_actions, self._last_action), None))
            self._pending_actions, self._last_action = 0, None
            self._pending.clear()
            self._pending_total = 0
            self._pending_patches = []
            self._sent_position = self._position
            self._last_frame = time.monotonic()
        if self._timeline is not None:
            self._outbox.append((json.dumps(message("timeline", **self._timeline)), None))
            self._timeline = None

    def _wake_pump(self) -> None:
        if self._pump_task is None:
            self._wake = asyncio.Event()
            self._pump_task = asyncio.create_task(self._pump())
        self._wake.set()

    async def _pump(self) -> None:
        """Send what is queued: at most one events frame per frame interval."""
        while not self.closed:
            await self._wake.wait()
            self._wake.clear()
            due = self._last_frame + self.frame_interval - time.monotonic()
            if (self._pending or self._pending_total or self._pending_patches) and due > 0 and not self._urgent:
                await asyncio.sleep(due)
            self._urgent = False
            self._seal()
            while self._outbox:
                await self._send_text(*self._outbox.popleft())
            self._plan_follow_up()

    def _plan_follow_up(self) -> None:
        """A timeline changed since the last one sent goes out at most once per
        KAFKA_LAB_STATE_INTERVAL_MS, taken by the next host call — make sure one comes then."""
        if self.host.timeline_version == self._timeline_version or self._follow_up is not None:
            return
        delay = max(self._last_timeline + self._state_interval - time.monotonic(), self.frame_interval)
        self._follow_up = asyncio.get_running_loop().call_later(delay, self._follow_up_now)

    def _follow_up_now(self) -> None:
        self._follow_up = None
        if not self.closed:
            asyncio.ensure_future(self._call_quietly())

    async def _call_quietly(self) -> None:
        try:
            await self.call(_nothing)
        except HostError:
            pass

    async def _send_text(self, text: str, to: frozenset[Tab] | None = None) -> None:
        for tab in [t for t in self.sockets if to is None or t in to]:
            try:
                await tab.deliver(text)
            except Exception:  # noqa: BLE001 - a tab that went away must not stop the others
                logger.debug("lab session %s: a tab could not take a frame", self.session_id, exc_info=True)

    # -- the end --------------------------------------------------------------------------------
    async def close(self, close_code: int | None = None) -> None:
        async with self.lock:
            self.closed = True
            if self._pump_task is not None:
                self._pump_task.cancel()
            if self._follow_up is not None:
                self._follow_up.cancel()
            await asyncio.to_thread(self.host.close)
        if close_code is not None:
            for tab in list(self.sockets):
                await tab.end(close_code)


def _shape_info(host: SessionHost) -> dict[str, Any]:
    shape = host.shape
    return {"brokers": shape.brokers, "seed": shape.seed, "truncation": shape.truncation,
            "config": dict(shape.config), "generation": getattr(host.journal, "generation", 1)}


TIMELINE_BYTES = 256 * 1024        # a `timeline` message, as JSON
HELLO_TIMELINE_BYTES = 128 * 1024  # ...and the timeline inside a `hello` (beside a model of up to ~700 KB)


def fit_timeline(timeline: dict[str, Any], budget: int = TIMELINE_BYTES) -> dict[str, Any]:
    """The timeline with as many of its newest marks as fit in `budget` bytes of JSON. A mark
    carries its command whole (a produce of 200 values of 100 bytes is 20 KB), so the newest 500
    once made a `timeline` of 1.2 MB, which Daphne refuses to send (and a `hello` with it)."""
    if len(json.dumps(timeline)) <= budget:
        return timeline
    marks = timeline.get("marks") or []
    size = len(json.dumps({**timeline, "marks": []}))
    kept = []
    for mark in reversed(marks):
        size += len(json.dumps(mark)) + 2
        if size > budget:
            break
        kept.append(mark)
    kept.reverse()
    return {**timeline, "marks": kept}


def _patch_groups(patches: list[str], budget: int) -> list[list[str]]:
    """Split patches (JSON texts, in order) into groups of at most `budget` bytes each; the last
    group is the one the events frame itself carries (returned separately by the caller)."""
    groups: list[list[str]] = [[]]
    size = 0
    for patch in patches:
        if groups[-1] and size + len(patch) > budget:
            groups.append([])
            size = 0
        groups[-1].append(patch)
        size += len(patch) + 1
    return groups


def events_frame(texts: list[str], coalesced: int, step: int, time_ms: int, seq: int, frame: int,
                 patches: list[str], actions: int = 0, last_action: str | None = None) -> str:
    """An `events` message from events and patches already in JSON (joining them is all the
    event loop does): `actions` scheduler actions ran since the frame before, the last one
    `last_action` (its label: what a Step did)."""
    return (f'{{"v": {PROTOCOL_VERSION}, "type": "events", "frame": {frame}, "step": {step}, "time_ms": {time_ms}, '
            f'"seq": {seq}, "coalesced": {coalesced}, "actions": {actions}, "last_action": {json.dumps(last_action)}, '
            f'"patches": [{", ".join(patches)}], "events": [{", ".join(texts)}]}}')


def state_frame(model: str, frame: int, step: int, time_ms: int, seq: int, series: str | None = None) -> str:
    return (f'{{"v": {PROTOCOL_VERSION}, "type": "state", "frame": {frame}, "step": {step}, "time_ms": {time_ms}, '
            f'"seq": {seq}, "series": {series or "null"}, "model": {model}}}')


def hello_frame(session: dict, model: str, frame: int, timeline: dict, clock: dict, history: dict | None,
                series: dict | None = None) -> str:
    rest = json.dumps({"session": session, "timeline": timeline, "clock": clock, "history": history,
                       "series": series})
    return f'{{"v": {PROTOCOL_VERSION}, "type": "hello", "frame": {frame}, "model": {model}, {rest[1:]}'


def ack_frame(request_id: Any, record: dict | None, warnings: list[str]) -> str:
    """An `ack` message: the command's place in the log (`index`, `first_seq`), whether its call is
    still running, and what Kafka accepted but the learner may not have meant (`warnings`)."""
    return json.dumps(message("ack", id=request_id, command=record, warnings=list(warnings)))


def get_host(session_id: uuid.UUID) -> SessionHost | None:
    """The SessionHost of a session this process serves (None if no tab has loaded it). Read its
    `cluster` only while holding its `lock` (a threading.RLock)."""
    live = registry.get(session_id)
    return live.host if live is not None and not live.closed else None


# -- every session in this process ------------------------------------------------------------
class Registry:
    """Every session this process serves, with memory bounded twice: at most KAFKA_LAB_MAX_HOSTS
    sessions, and at most KAFKA_LAB_MAX_HOSTS_PER_VISITOR of one visitor's (lab.fairness).

    Room is made before a session is built, never after: the session of the visitor (for the
    server's cap: of anyone) that has been idle longest — no tab, not being opened, no call
    running — is dropped; if none can be, the load is refused (lab.fairness.Refused, said to the
    tab). A session being opened is pinned until its tab has joined. (Evicting after the build
    once looped: with every other session watched, the session just built — its tab not yet
    joined — was the only idle one, so it was dropped, rebuilt, dropped…)"""

    def __init__(self) -> None:
        self._live: dict[uuid.UUID, LiveSession] = {}
        self._loading: dict[uuid.UUID, asyncio.Future] = {}
        self._opening: dict[uuid.UUID, int] = {}      # sessions being opened -> how many tabs are opening them
        self._owners: dict[uuid.UUID, str | None] = {}  # the visitor owning each live or loading session

    def get(self, session_id: uuid.UUID) -> LiveSession | None:
        return self._live.get(session_id)

    def __len__(self) -> int:
        return len(self._live)

    def session_ids(self) -> list[uuid.UUID]:
        """The sessions this process serves now (lab.workers checks they are still placed here)."""
        return [sid for sid, live in self._live.items() if not live.closed]

    async def attach(self, session_id: uuid.UUID, tab: Tab, visitor: str | None = None) -> LiveSession:
        """The session's LiveSession (built from the DB if this process has none), watched by one
        more tab. Raises lab.fairness.Refused when there is no room for it."""
        self._opening[session_id] = self._opening.get(session_id, 0) + 1
        try:
            while True:
                live = self._live.get(session_id)
                if live is not None and live.closed:
                    await asyncio.sleep(0.01)  # being dropped: build it again once it is gone
                    continue
                live = live or await self._load(session_id, visitor)
                try:
                    await live.join(tab)
                    return live
                except HostError:
                    if not live.closed:
                        raise
        finally:
            self._opening[session_id] -= 1
            if not self._opening[session_id]:
                del self._opening[session_id]

    async def ensure(self, session_id: uuid.UUID) -> LiveSession:
        """The session's LiveSession, built from the DB if this process has none — without a tab
        (the read API: a Spark executor reads a session nobody has open in a browser)."""
        live = self._live.get(session_id)
        if live is not None and not live.closed:
            return live
        live = await self._load(session_id, None)
        live.idle_since = live.idle_since or time.monotonic()
        return live

    async def _load(self, session_id: uuid.UUID, visitor: str | None) -> LiveSession:
        loading = self._loading.get(session_id)
        if loading is not None:
            return await asyncio.shield(loading)
        loading = self._loading[session_id] = asyncio.get_running_loop().create_future()
        try:
            if visitor is None:
                visitor = await asyncio.to_thread(_owner_of, session_id)
            self._owners[session_id] = visitor
            await self._make_room(session_id, visitor)
            host, info = await asyncio.to_thread(build_host, session_id, writer=journal_writer)
            live = self._live[session_id] = LiveSession(session_id, host, info)
            live.visitor = visitor
            loading.set_result(live)
        except BaseException as error:
            if session_id not in self._live:
                self._owners.pop(session_id, None)
            loading.set_exception(error)
            loading.exception()  # retrieved: no "never retrieved" warning when nobody else waited
            raise
        finally:
            del self._loading[session_id]
        return live

    async def _make_room(self, session_id: uuid.UUID, visitor: str | None) -> None:
        """Drop the longest idle sessions until `session_id` fits under both caps; Refused if
        one of them is full of sessions in use. Each turn drops a session: this ends."""
        server_cap, visitor_cap = settings.KAFKA_LAB_MAX_HOSTS, fairness.max_hosts_per_visitor()
        for _ in range(len(self._live) + 1):
            others = [sid for sid, s in self._live.items() if not s.closed and sid != session_id]
            others += [sid for sid in self._loading if sid != session_id and sid not in self._live]
            mine = [sid for sid in others if visitor is not None and self._owners.get(sid) == visitor]
            if visitor_cap > 0 and len(mine) >= visitor_cap:
                victim = self._longest_idle(visitor)
                if victim is None:
                    raise fairness.Refused(
                        f"You have {len(mine)} lab sessions open on this server, the most one visitor may "
                        f"({visitor_cap}): close the tab of one you are not using, then reload this page",
                        fairness.CLOSE_VISITOR_FULL)
            elif len(others) >= server_cap:
                victim = self._longest_idle(None)
                if victim is None:
                    raise fairness.Refused(
                        f"The lab server is full: {len(others)} sessions in memory, all in use. "
                        "Try again in a minute", fairness.CLOSE_SERVER_FULL)
            else:
                return
            await self.drop(victim.session_id)

    def _longest_idle(self, visitor: str | None) -> LiveSession | None:
        """The session idle longest that may be evicted (of `visitor`'s, if given): no tab, none
        opening it, no call running."""
        idle = [s for sid, s in self._live.items()
                if not s.closed and not s.sockets and s.idle_since is not None and sid not in self._opening
                and not s.busy() and (visitor is None or self._owners.get(sid) == visitor)]
        return min(idle, key=lambda s: s.idle_since, default=None)

    async def detach(self, live: LiveSession, tab: Tab) -> None:
        """One tab fewer. With none left the clock pauses, the position is saved, and the host is
        dropped after KAFKA_LAB_IDLE_HOST_TTL_S unless a tab comes back."""
        live.sockets.discard(tab)
        if live.sockets or live.closed:
            return
        live.idle_since = time.monotonic()
        try:
            await live.call(live.host.pause)
            await live.save_position()
        except HostError:
            return
        ttl = settings.KAFKA_LAB_IDLE_HOST_TTL_S
        if ttl <= 0:
            await self._drop_if_idle(live, 0)
        else:
            asyncio.get_running_loop().call_later(ttl, lambda: asyncio.ensure_future(self._drop_if_idle(live, ttl)))

    async def _drop_if_idle(self, live: LiveSession, ttl: float) -> None:
        if live.sockets or live.idle_since is None or time.monotonic() - live.idle_since < ttl * 0.99:
            return
        await self.drop(live.session_id)

    async def drop(self, session_id: uuid.UUID, *, close_code: int | None = None, release: bool = True) -> None:
        """Forget a session here: its cluster is shut down and its run dir deleted (the log stays in
        the DB). With `close_code`, its tabs are closed with it (the session was deleted, or moved).
        With placement on, its journal is written to the end and then its placement released
        (unless `release` is False: another worker holds it already)."""
        live = self._live.get(session_id)
        if live is not None:
            await live.close(close_code)  # stays listed while it closes: a tab arriving now waits for it
            if self._live.get(session_id) is live:
                del self._live[session_id]
                if session_id not in self._loading:
                    self._owners.pop(session_id, None)
            if settings.KAFKA_LAB_PLACEMENT and release:
                from lab import workers  # placement only: lab.workers imports this module
                await asyncio.to_thread(journal_writer.flush)
                await workers.released(session_id)

    async def reset(self, session_id: uuid.UUID, shape: Shape) -> bool:
        """Reset a session served here (a view's "reset"); False if none is, then the caller resets the DB."""
        live = self._live.get(session_id)
        if live is None:
            return False
        await live.reset(shape)
        return True

    async def close_all(self) -> None:
        """Drop every session (its log written to the end): for tests and shutdown."""
        for session_id in list(self._live):
            await self.drop(session_id)
        await asyncio.to_thread(journal_writer.flush)


def _owner_of(session_id: uuid.UUID) -> str | None:
    """The visitor owning a lab session (sync: run it in a thread)."""
    return LabSession.objects.filter(pk=session_id).values_list("owner", flat=True).first()


registry = Registry()
