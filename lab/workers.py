"""This worker process, as the other workers see it (docs/placement.md): a name, a channel on the
shared layer, a heartbeat row (lab.models.LabWorker) written every KAFKA_LAB_WORKER_HEARTBEAT_S.

Only with placement on (a shared channel layer: settings.KAFKA_LAB_PLACEMENT). The worker starts
with the first ASGI call that reaches lab.tunnel.PlacementRouter (any HTTP request or socket) and
then runs two tasks on the server's event loop:

- the listener: every message on the worker's channel is a tunnel's (lab.tunnel): `tunnel.open`
  starts the real consumer of a socket accepted by another worker, `tunnel.event` feeds it;
- the heartbeat: writes the row, then checks the other side of every tunnel — a relay whose owner
  died closes its browser socket (the page reconnects and lands on the session's new owner), an
  owner-side tab whose relay's worker died is disconnected — and drops sessions this worker serves
  that another worker took over (this one was thought dead: a long pause), closing their tabs so
  they reconnect to the session's one true owner.

The heartbeat runs on the event loop on purpose: a worker whose loop is stuck cannot serve its
sessions, and should be taken over.
"""
from __future__ import annotations

import asyncio
import atexit
import logging
import os
import secrets
import socket
import uuid
from typing import TYPE_CHECKING, Any

from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils import timezone

from lab import placement

if TYPE_CHECKING:
    from lab.tunnel import OwnerTab, Relay

logger = logging.getLogger(__name__)

# The session moved to another worker (its worker died, or was thought dead): the page reconnects
# (static/js/lab-socket.js reconnects on any code outside 4000-4999) and gets a fresh `hello`.
# Not 1012 ("service restart"): Daphne's autobahn sends only 1000 and 3000-4999.
CLOSE_MOVED = 3012
FORGET_EVERY_BEATS = 300   # how often a worker deletes long-dead workers' rows


class Worker:
    """This process on the layer. `relays`: sockets accepted here whose session lives elsewhere;
    `tabs`: sockets accepted elsewhere whose session lives here (by tunnel id)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.channel = ""
        self.started_at = timezone.now()
        self.relays: set[Relay] = set()
        self.tabs: dict[str, OwnerTab] = {}
        self.apps: dict[str, Any] = {}  # the ASGI apps a relayed request runs here, by scope type (lab.asgi)
        self.last_beat_error: str | None = None
        self.listen_error: str | None = None
        self._tasks: list[asyncio.Task] = []

    async def start(self) -> None:
        # The default prefix: channels_redis reads every process-local channel of a process through
        # one list ("specific.<process>!"), under one lock; a channel of another prefix starves them.
        self.channel = await get_channel_layer().new_channel()
        try:
            await database_sync_to_async(placement.beat)(self.name, self.channel, self.started_at)
        except Exception as exc:  # noqa: BLE001 - the heartbeat task keeps trying and /healthz says why
            self._beat_failed(exc)
        self._tasks = [asyncio.create_task(self._listen(), name="lab-worker-listen"),
                       asyncio.create_task(self._heartbeats(), name="lab-worker-heartbeat")]
        logger.info("lab worker %s: listening on %s", self.name, self.channel)

    def status(self) -> dict[str, Any]:
        """For /healthz: who this is and what crosses it."""
        from lab.registry import registry
        return {"name": self.name, "placement": True, "sessions": len(registry), "relays": len(self.relays),
                "remote_tabs": len(self.tabs),
                "heartbeat": "ok" if self.last_beat_error is None else f"error: {self.last_beat_error}",
                "listening": "ok" if self.listen_error is None else f"error: {self.listen_error}"}

    # -- the listener -----------------------------------------------------------------------------
    async def _listen(self) -> None:
        from lab import tunnel
        layer = get_channel_layer()
        while True:
            try:
                msg = await layer.receive(self.channel)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - Redis away for a moment: try again, say it once
                if self.listen_error is None:
                    logger.error("lab worker %s: could not read its channel (the channel layer: %s)", self.name,
                                 _one_line(exc))
                self.listen_error = _one_line(exc)
                await asyncio.sleep(1)
                continue
            if self.listen_error is not None:
                logger.warning("lab worker %s: reading its channel again", self.name)
                self.listen_error = None
            try:
                tunnel.dispatch(self, msg)
            except Exception:  # noqa: BLE001 - one bad message must not stop the worker
                logger.exception("lab worker %s: a %r message failed", self.name, msg.get("type"))

    # -- the heartbeat ----------------------------------------------------------------------------
    async def _heartbeats(self) -> None:
        beats = 0
        while True:
            await asyncio.sleep(settings.KAFKA_LAB_WORKER_HEARTBEAT_S)
            beats += 1
            try:
                await database_sync_to_async(placement.beat)(self.name, self.channel, self.started_at)
                if self.last_beat_error is not None:
                    logger.warning("lab worker %s: heartbeat written again", self.name)
                self.last_beat_error = None
                await self._check_others()
                if beats % FORGET_EVERY_BEATS == 0:
                    await database_sync_to_async(placement.forget_old_workers)()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # noqa: BLE001 - the database away: keep beating, say it once
                self._beat_failed(exc)

    def _beat_failed(self, exc: Exception) -> None:
        if self.last_beat_error is None:
            logger.error("lab worker %s: heartbeat not written (the database: %s)", self.name, _one_line(exc))
        self.last_beat_error = _one_line(exc)

    async def _check_others(self) -> None:
        from lab.registry import registry
        workers = {r.owner for r in self.relays} | {t.relay_worker for t in self.tabs.values()}
        alive = await database_sync_to_async(placement.alive_channels)(workers) if workers else {}
        for relay in [r for r in self.relays if alive.get(r.owner) != r.owner_channel]:
            relay.owner_died()
        for tab in [t for t in self.tabs.values() if alive.get(t.relay_worker) != t.relay_worker_channel]:
            tab.relay_died()
        served = registry.session_ids()
        if served:
            mine = await database_sync_to_async(placement.placed_on)(self.name, served)
            for session_id in set(served) - mine:
                logger.warning("lab worker %s: session %s was taken over by another worker; dropping it here",
                               self.name, session_id)
                await registry.drop(session_id, close_code=CLOSE_MOVED, release=False)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        await database_sync_to_async(placement.leave)(self.name)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].strip() if text else type(exc).__name__


_worker: Worker | None = None
_starting: asyncio.Future | None = None


def current() -> Worker | None:
    """This process's worker once started (None with placement off, or before the first call)."""
    return _worker


_name: str | None = None


def worker_name() -> str:
    """This process's name, the same for its whole life: its heartbeat row's key, and what a
    notebook being graded here records as its grader (spark_exercises.startup)."""
    global _name
    if _name is None:
        _name = settings.KAFKA_LAB_WORKER_NAME or f"{socket.gethostname()}-{os.getpid()}-{secrets.token_hex(2)}"
    return _name


async def ensure_started(apps: dict[str, Any]) -> Worker:
    """This process's worker, started on first use (on the server's event loop)."""
    global _worker, _starting
    if _worker is not None:
        return _worker
    if _starting is not None:
        return await asyncio.shield(_starting)
    _starting = asyncio.get_running_loop().create_future()
    worker = Worker(worker_name())
    worker.apps = apps
    try:
        await worker.start()
    except BaseException as exc:
        _starting.set_exception(exc)
        _starting.exception()
        _starting = None
        raise
    _worker = worker
    _starting.set_result(worker)
    atexit.register(_leave_at_exit, worker.name)
    return worker


def _leave_at_exit(name: str) -> None:
    """A clean stop (SIGTERM, a restart): delete this worker's row, so the sessions it hosted move
    at the next socket instead of after DEAD_AFTER. Acknowledged commands are in the journal
    already (durable acks); a crash skips this and the heartbeat's silence does the same, later."""
    try:
        placement.leave(name)
    except Exception as exc:  # noqa: BLE001 - at exit: say it, do not raise
        logger.warning("lab worker %s: row not deleted at exit (%s)", name, _one_line(exc))


async def released(session_id: uuid.UUID) -> None:
    """A session dropped from this process's memory (its journal written): let any worker claim it."""
    if _worker is not None:
        await database_sync_to_async(placement.release)(session_id, _worker.name)
