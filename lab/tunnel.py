"""Sockets tunnelled to the worker that hosts their session (docs/placement.md).

With placement on, a lab session's engine lives in one worker process, and any worker accepts any
socket. PlacementRouter, in front of the websocket routes, finds the socket's session, claims it
(lab.placement.claim) and then either runs the route's consumer here (this worker hosts it) or
becomes a Relay: the browser's raw ASGI events (websocket.connect / receive / disconnect) go over
the channel layer to the owner's worker channel, where an OwnerTab runs the very same app —
Channels' auth stack and the URL router, so LabConsumer, LessonConsumer or whatever the route
names — as a virtual ASGI instance with the scope rebuilt (path, headers with the cookies, query
string, client): the auth middleware reads the visitor's session and user again from the shared
database. The consumer's sends (websocket.accept / send / close) come back over the layer to the
relay, which writes them to the browser. The consumer cannot tell.

Messages on the layer (dicts, msgpack):
  to a worker channel:   {"type": "tunnel.open", "tunnel": id, "reply": channel, "relay_worker": name,
                          "relay_worker_channel": its worker's channel, "scope": {...}}
                         {"type": "tunnel.event", "tunnel": id, "event": <an ASGI receive event>}
  to a relay's channel:  {"type": "tunnel.send", "events": [<ASGI send events>, oldest first]}
                         (what waits for the relay, up to BATCH_BYTES a message)

Backpressure, both ways bounded: the relay writes to its browser only while Daphne's transport
holds less than lab.send_queue.WRITE_WATER_BYTES (and closes it 4408 after a stall), so it stops
reading its channel; the layer's channel then fills (`capacity`), and the owner's sends meet
ChannelFull. The OwnerTab keeps what the layer refused in a buffer that looks like a Twisted
transport to lab.send_queue.transport_backlog: the tab's TabQueue sees a socket that takes
nothing, drops and resyncs, and closes a tab that stays stuck — a slow tab, not an exception.
"""
from __future__ import annotations

import asyncio
import logging
import re
import time
import uuid
from collections import deque
from typing import Any

from channels.db import database_sync_to_async
from channels.exceptions import ChannelFull
from channels.layers import get_channel_layer
from django.conf import settings
from django.utils.translation import gettext

from lab import placement, workers
from lab.send_queue import CLOSE_TOO_SLOW, WRITE_WATER_BYTES, TabLimits, transport_backlog

logger = logging.getLogger(__name__)

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
# The routes of lab.routing whose consumer drives a lab session's engine.
SESSION_ROUTES = [re.compile(rf"^/?ws/lab/(?P<session_id>{_UUID})/$"),
                  re.compile(rf"^/?ws/lessons/[-a-zA-Z0-9_]+/(?P<session_id>{_UUID})/$")]
WATCH_ROUTE = re.compile(r"^/?ws/watch/(?P<token>[^/]{1,200})/$")
SCOPE_KEYS = ("type", "path", "raw_path", "root_path", "headers", "query_string", "client", "server",
              "subprotocols", "scheme", "http_version", "method", "asgi")
ACCEPT_TIMEOUT_S = 15.0      # an owner that lives but never answers the handshake
FULL_RETRY_S = 0.05          # a full channel: how soon to try again
OWNER_GIVE_UP_S = 60.0       # an owner-side tab whose relay took nothing for this long is disconnected
BATCH_BYTES = 256 * 1024     # an owner-side tab's waiting events go to its relay in messages of at most this


def _session_for_token() -> Any:
    """classroom.broadcast.session_for_token, if the broadcast feature is installed (else None:
    ws/watch/ is then served by the worker that accepts it, not tunnelled)."""
    try:
        from classroom.broadcast import session_for_token
    except ImportError:
        return None
    return session_for_token


async def session_of(path: str) -> uuid.UUID | None:
    """The lab session a socket's path drives (None: a route not tunnelled, or no such session)."""
    for route in SESSION_ROUTES:
        match = route.match(path)
        if match:
            return uuid.UUID(match["session_id"])
    match = WATCH_ROUTE.match(path)
    lookup = _session_for_token() if match else None
    if lookup is None:
        return None
    found = await database_sync_to_async(lookup)(match["token"])
    if found is None:
        return None
    return found if isinstance(found, uuid.UUID) else uuid.UUID(str(getattr(found, "pk", found)))


def portable_scope(scope: dict[str, Any]) -> dict[str, Any]:
    """The parts of a socket's scope that cross the layer: plain data only (no user, no session:
    the owner's auth middleware loads them again from the cookies)."""
    return {key: scope[key] for key in SCOPE_KEYS if key in scope}


def rebuilt_scope(data: dict[str, Any], relay_worker: str) -> dict[str, Any]:
    """The scope an owner-side consumer runs with (msgpack turned tuples into lists)."""
    scope = dict(data)
    scope["headers"] = [(bytes(name), bytes(value)) for name, value in data.get("headers", [])]
    for key in ("client", "server"):
        if scope.get(key) is not None:
            scope[key] = tuple(scope[key])
    scope["tunnelled_from"] = relay_worker
    return scope


class PlacementRouter:
    """ASGI middleware in front of the websocket routes and the HTTP app (lab.asgi): with placement
    off it is a pass-through; with it on, a socket whose session lives on another worker is relayed
    there, and so is an HTTP request that reads or changes a session's engine (its panels, its
    model, the read API, reset, delete) — any worker answers any URL. `apps` is what an owner runs
    for a relayed request, by scope type (this router's inner app is one of them)."""

    def __init__(self, inner: Any, apps: dict[str, Any]) -> None:
        self.inner, self.apps = inner, apps

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if not settings.KAFKA_LAB_PLACEMENT or scope["type"] not in ("websocket", "http"):
            return await self.inner(scope, receive, send)
        worker = await workers.ensure_started(self.apps)
        path = scope.get("path", "")
        if scope["type"] == "websocket":
            session_id, claims = await session_of(path), True
        else:
            session_id, claims = http_session_of(path)
        if session_id is None:
            return await self.inner(scope, receive, send)
        for _ in range(2):   # the owner may die between the claim and the look-up of its channel: claim again
            if claims:
                owner = await database_sync_to_async(placement.claim)(session_id, worker.name)
            else:
                owner = await database_sync_to_async(placement.owner_of)(session_id)
            if owner is None or owner == worker.name:
                return await self.inner(scope, receive, send)
            channel = await database_sync_to_async(placement.channel_of)(owner)
            if channel is not None:
                return await Relay(worker, owner, channel, scope, receive, send).run()
            if not claims:   # its owner is dead and nobody took it over: nothing runs it, answer here
                return await self.inner(scope, receive, send)
        await _refuse(scope, receive, send)


# HTTP paths that read or change a running session's engine (lab/urls_*.py): served by its owner.
# The read API builds a session that runs nowhere (a Spark job may read a session nobody has open),
# so it claims one like a socket does; the others follow a placement and never make one.
HTTP_FOLLOWING = re.compile(rf"^/lab/(?P<session_id>{_UUID})/(?:reset|delete|model\.json|explore/.*)$")
HTTP_CLAIMING = re.compile(rf"^/api/v1/sessions/(?P<session_id>{_UUID})/")


def http_session_of(path: str) -> tuple[uuid.UUID | None, bool]:
    """The session an HTTP path acts on, and whether serving it claims the session."""
    match = HTTP_CLAIMING.match(path)
    if match:
        return uuid.UUID(match["session_id"]), True
    match = HTTP_FOLLOWING.match(path)
    return (uuid.UUID(match["session_id"]), False) if match else (None, False)


async def _refuse(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """No worker could take the session just now: refuse (the page retries)."""
    if scope["type"] == "http":
        await send({"type": "http.response.start", "status": 503,
                    "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"retry-after", b"3")]})
        text = gettext("This lab session is moving to another server process: try again in a moment.")
        await send({"type": "http.response.body", "body": text.encode()})
        return
    await receive()   # websocket.connect
    await send({"type": "websocket.close", "code": workers.CLOSE_MOVED})


# -- the accepting side -----------------------------------------------------------------------------
class Relay:
    """A browser socket (or an HTTP request) accepted here whose session lives on `owner`: raw
    events both ways, until the socket is gone (or the response has been sent)."""

    def __init__(self, worker: workers.Worker, owner: str, owner_channel: str, scope: dict[str, Any],
                 receive: Any, send: Any) -> None:
        self.worker, self.owner, self.owner_channel = worker, owner, owner_channel
        self.scope, self.receive, self.send = scope, receive, send
        self.layer = get_channel_layer()
        self.reply = ""
        self.accepted = False
        self.closed = False
        self.http = scope["type"] == "http"
        self._backlog = transport_backlog(send)
        self._finished = asyncio.Event()   # the browser's socket is gone, or the HTTP response sent

    async def run(self) -> None:
        # A channel of its own in Redis, not a process-local one (new_channel()): channels_redis
        # reads all of a process's local channels through one list into in-process buffers that
        # drop their oldest message when full — a relay that stops reading would lose frames
        # instead of making the owner's sends meet ChannelFull.
        self.reply = f"labrelay.{uuid.uuid4().hex}"
        self.worker.relays.add(self)
        outbound = asyncio.create_task(self._outbound())
        watchdog = asyncio.create_task(self._handshake_watchdog())
        inbound = None
        try:
            await self._to_owner({"type": "tunnel.open", "tunnel": self.reply, "reply": self.reply,
                                  "relay_worker": self.worker.name, "relay_worker_channel": self.worker.channel,
                                  "scope": portable_scope(self.scope)})
            inbound = asyncio.create_task(self._inbound())
            await self._finished.wait()
        finally:
            self.worker.relays.discard(self)
            for task in (inbound, outbound, watchdog):
                if task is not None:
                    task.cancel()

    async def _inbound(self) -> None:
        """Browser → owner, until the browser's socket is gone."""
        while True:
            event = await self.receive()
            try:
                await self._to_owner({"type": "tunnel.event", "tunnel": self.reply, "event": event})
            except Exception:  # noqa: BLE001 - the layer away: the owner cannot be told; end this socket
                logger.warning("lab relay %s: could not reach %s", self.reply, self.owner, exc_info=True)
                await self._close(workers.CLOSE_MOVED)
            if event["type"] in ("websocket.disconnect", "http.disconnect"):
                self._finished.set()
                return

    async def _to_owner(self, msg: dict[str, Any]) -> None:
        started = time.monotonic()
        while True:
            try:
                return await self.layer.send(self.owner_channel, msg)
            except ChannelFull:   # the owner's worker is swamped: wait a little, as a slow network would
                if time.monotonic() - started > OWNER_GIVE_UP_S:
                    raise
                await asyncio.sleep(FULL_RETRY_S)

    async def _outbound(self) -> None:
        """Owner → browser, never faster than the browser's socket takes it."""
        stall_s = TabLimits.from_settings().stall_s
        while True:
            msg = await self.layer.receive(self.reply)
            for event in msg.get("events", []):
                if not await self._write(event, stall_s):
                    return

    async def _write(self, event: dict[str, Any], stall_s: float) -> bool:
        """One event to the browser, once its socket has room; False when this relay is done."""
        waiting_since = time.monotonic()
        while self._backlog() > WRITE_WATER_BYTES:   # stop reading: the channel fills, the owner sees ChannelFull
            if time.monotonic() - waiting_since > stall_s:
                logger.warning("lab relay %s: its browser took nothing for %g s: closing it", self.reply, stall_s)
                await self._close(CLOSE_TOO_SLOW)
                return False
            await asyncio.sleep(0.02)
        if self.closed:
            return False
        kind = event.get("type")
        if kind in ("websocket.accept", "http.response.start"):
            self.accepted = True
        elif kind == "websocket.close":
            self.closed = True
        await self.send(event)
        if kind == "http.response.body" and not event.get("more_body", False):
            self.closed = True
            self._finished.set()
            return False
        return True

    async def _handshake_watchdog(self) -> None:
        await asyncio.sleep(ACCEPT_TIMEOUT_S)
        if not self.accepted and not self.closed:
            logger.warning("lab relay %s: %s did not answer the handshake in %g s", self.reply, self.owner,
                           ACCEPT_TIMEOUT_S)
            await self._close(workers.CLOSE_MOVED)

    def owner_died(self) -> None:
        """The owner's heartbeat stopped (lab.workers): close the browser's socket with a code the
        page reconnects on; its next socket claims the session and rebuilds it by replay."""
        if not self.closed:
            logger.warning("lab relay %s: worker %s died; closing its socket (%d) for a reconnect",
                           self.reply, self.owner, workers.CLOSE_MOVED)
            asyncio.ensure_future(self._close(workers.CLOSE_MOVED))

    async def _close(self, code: int) -> None:
        if self.closed:
            return
        self.closed = True
        try:
            if self.http:
                self._finished.set()
                if not self.accepted:   # a response begun cannot be taken back; one not begun can say why
                    await _refuse(self.scope, self.receive, self.send)
                return
            await self.send({"type": "websocket.close", "code": code})
        except Exception:  # noqa: BLE001 - the browser may be gone already
            logger.warning("lab relay %s: close (%d) not sent", self.reply, code, exc_info=True)


# -- the owning side --------------------------------------------------------------------------------
class _LayerTransport:
    """What an OwnerTab's layer refused (ChannelFull) and keeps for later, shaped like the part of
    a Twisted transport that lab.send_queue.transport_backlog reads: `dataBuffer` and `offset`
    (nothing), `_tempDataLen` (the bytes waiting here). The TabQueue then treats a full channel as
    a socket that is not being read."""

    dataBuffer = b""
    offset = 0

    def __init__(self) -> None:
        self.waiting: deque[dict[str, Any]] = deque()
        self._tempDataLen = 0

    def push(self, event: dict[str, Any]) -> None:
        self.waiting.append(event)
        self._tempDataLen += _size(event)

    def pop(self) -> dict[str, Any]:
        event = self.waiting.popleft()
        self._tempDataLen -= _size(event)
        return event


def _size(event: dict[str, Any]) -> int:
    return len(event.get("text") or event.get("bytes") or b"")


class OwnerTab:
    """A socket accepted by another worker, served here: the real consumer (through `app`) as a
    virtual ASGI instance fed from the layer."""

    def __init__(self, worker: workers.Worker, tunnel: str, reply: str, relay_worker: str,
                 relay_worker_channel: str, scope: dict[str, Any]) -> None:
        self.worker, self.tunnel, self.reply, self.relay_worker = worker, tunnel, reply, relay_worker
        self.relay_worker_channel = relay_worker_channel   # its incarnation: a restart gets a new one
        self.layer = get_channel_layer()
        self.inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.transport = _LayerTransport()   # found by lab.send_queue.transport_backlog through `send`
        self.http = scope.get("type") == "http"
        self._flusher: asyncio.Task | None = None
        self._ended = False
        self.gone = False   # the browser's socket is gone: what waits for it is dropped, not retried
        self.task = asyncio.create_task(self._run(scope))

    async def _run(self, scope: dict[str, Any]) -> None:
        try:
            await self.worker.apps[scope["type"]](scope, self.inbox.get, self.send)
        except Exception:  # noqa: BLE001 - as Daphne would: log it, close the browser's socket
            logger.exception("lab tunnel %s: its consumer failed", self.tunnel)
            if scope["type"] == "websocket":
                await self.send({"type": "websocket.close", "code": 1011})
        finally:
            self._ended = True
            self.worker.tabs.pop(self.tunnel, None)

    def received(self, event: dict[str, Any]) -> None:
        if event.get("type") in ("websocket.disconnect", "http.disconnect"):
            self.gone = True
        self.inbox.put_nowait(event)

    async def send(self, event: dict[str, Any]) -> None:
        """The consumer's send: never waits (a full channel keeps it here, counted as backlog)."""
        self.transport.push(event)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush())

    async def _flush(self) -> None:
        full_since: float | None = None
        while self.transport.waiting:
            if self.gone:
                self.transport.waiting.clear()
                self.transport._tempDataLen = 0
                return
            batch = self._batch()
            try:
                await self.layer.send(self.reply, {"type": "tunnel.send", "events": batch})
            except ChannelFull:
                full_since = full_since or time.monotonic()
                if time.monotonic() - full_since > OWNER_GIVE_UP_S:
                    logger.warning("lab tunnel %s: its relay took nothing for %g s: disconnecting it",
                                   self.tunnel, OWNER_GIVE_UP_S)
                    self.transport.waiting.clear()
                    self.relay_died()
                    return
                await asyncio.sleep(FULL_RETRY_S)
                continue
            except Exception:  # noqa: BLE001 - the layer away: the browser cannot be reached any more
                logger.warning("lab tunnel %s: could not send to its relay", self.tunnel, exc_info=True)
                self.transport.waiting.clear()
                self.relay_died()
                return
            full_since = None
            for _ in batch:
                self.transport.pop()

    def _batch(self) -> list[dict[str, Any]]:
        """The events waiting, oldest first, up to BATCH_BYTES (at least one): a relay that fell
        behind catches up in a few layer messages instead of one round trip per frame — each
        message a relay receives costs channels_redis three Redis round trips, and a class of
        tunnelled watchers fell seconds behind at ~8 frames a second."""
        batch, size = [], 0
        for event in self.transport.waiting:
            if batch and size + _size(event) > BATCH_BYTES:
                break
            batch.append(event)
            size += _size(event)
        return batch

    def relay_died(self) -> None:
        """The accepting worker is gone (or its channel stuck): the consumer sees its socket close."""
        if not self._ended:
            self.received({"type": "http.disconnect"} if self.http else {"type": "websocket.disconnect", "code": 1006})


def dispatch(worker: workers.Worker, msg: dict[str, Any]) -> None:
    """A message on this worker's channel (lab.workers' listener)."""
    kind, tunnel = msg.get("type"), msg.get("tunnel")
    if not isinstance(tunnel, str):
        logger.warning("lab worker %s: a %r message without a tunnel id", worker.name, kind)
        return
    if kind == "tunnel.open":
        scope = rebuilt_scope(msg.get("scope") or {}, str(msg.get("relay_worker")))
        if scope.get("type") not in worker.apps:
            logger.warning("lab worker %s: a tunnel for a %r scope", worker.name, scope.get("type"))
            return
        worker.tabs[tunnel] = OwnerTab(worker, tunnel, str(msg.get("reply")), str(msg.get("relay_worker")),
                                       str(msg.get("relay_worker_channel")), scope)
    elif kind == "tunnel.event":
        tab = worker.tabs.get(tunnel)
        if tab is not None:
            tab.received(msg.get("event") or {})
    else:
        logger.warning("lab worker %s: unknown message type %r", worker.name, kind)


class StartsWorker:
    """The outermost ASGI app (lab.asgi): with placement on, the first call of any kind (a health
    probe, a page) starts this process's worker, so it beats and listens before any socket comes.
    A worker that cannot start (Redis away) is retried on the next call; the call goes on."""

    def __init__(self, inner: Any, apps: dict[str, Any]) -> None:
        self.inner, self.apps = inner, apps

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if settings.KAFKA_LAB_PLACEMENT and scope["type"] != "lifespan" and workers.current() is None:
            try:
                await workers.ensure_started(self.apps)
            except Exception as exc:  # noqa: BLE001 - said once per try, in one line; /healthz says it too
                logger.error("lab worker: could not start (%s)", str(exc).strip().splitlines()[0] if str(exc) else exc)
        return await self.inner(scope, receive, send)
