"""The lab's WebSocket consumer: one per browser tab at ws/lab/<session uuid>/ (docs/lab-protocol.md).

It only translates: a message's `type` picks a handler, the handler calls the session's
LiveSession (lab.registry), which runs the engine in a worker thread and sends the events to
every tab of the session. It decides no Kafka semantics. Every bad frame — not JSON, not an
object, over 64 KiB, a wrong `v`, an unknown `type`, a missing field — gets an `error` message
back; the socket and the session stay up. A tab whose visitor does not own the session is
closed with code 4403.

Everything sent to a tab goes through its TabQueue (lab.send_queue): bounded, so a tab that does
not read gets a `state` instead of a backlog, and is closed (4408) if it still cannot keep up. A
visitor's tabs share a command rate (lab.fairness): over it, a message gets an `error`
(THROTTLING_QUOTA_EXCEEDED) and is not run. A session the registry refuses to load (the
visitor's or the server's cap of sessions in memory, all in use) gets an `error` saying so and
the socket is closed (4429: the visitor's cap; 4503: the server's).
"""
from __future__ import annotations

import json
import logging
import re
import uuid
from typing import Any

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from classroom import pointer
from engine.scenarios.runner import ScenarioError, builtin_names, load_scenario
from lab import fairness
from lab.fairness import Refused
from lab.host import HostError, Shape
from lab.limits import LimitExceeded, Limits
from lab.models import LabSession
from lab.owners import scope_owner
from lab.registry import PROTOCOL_VERSION, LiveSession, ack_frame, message, registry
from lab.send_queue import TabQueue, transport_backlog

logger = logging.getLogger(__name__)

MAX_FRAME_BYTES = 64 * 1024
CLOSE_NOT_YOURS = 4403
CLOSE_DELETED = 4404
CLOCK_ACTIONS = ("play", "pause", "step", "step_until", "rewind", "speed")
HISTORY_PAGE_MAX = 1000


class ProtocolError(Exception):
    """A message the protocol does not allow; answered with an `error`."""


class LabConsumer(AsyncJsonWebsocketConsumer):
    HANDLERS = {"command": "on_command", "clock": "on_clock", "load_scenario": "on_load_scenario",
                "reset": "on_reset", "snapshot": "on_snapshot", "undo": "on_undo", "history": "on_history",
                "pointer": "on_pointer"}

    live: LiveSession | None = None
    outbox: TabQueue | None = None
    visitor: str = ""

    async def connect(self) -> None:
        await self.accept()
        session_id: uuid.UUID = self.scope["url_route"]["kwargs"]["session_id"]
        owner = scope_owner(self.scope)
        if not owner or not await _owns(owner, session_id):
            await self.close(code=CLOSE_NOT_YOURS)
            return
        self.visitor = owner
        self.outbox = TabQueue(self._send_now, self._resync, self._close_slow, transport_backlog(self.base_send))
        try:
            self.live = await registry.attach(session_id, self, visitor=owner)  # it sends `hello` first
            if self.live.pointer is not None:   # after the hello, in the tab's queue
                await self.send(text_data=json.dumps(message("pointer", target=self.live.pointer)))
        except Refused as refused:
            await self._send_now(json.dumps(message("error", message=refused.message,
                                                    kafka_error="THROTTLING_QUOTA_EXCEEDED")))
            await self.close(code=refused.close_code)

    async def disconnect(self, code: int) -> None:
        if self.outbox is not None:
            self.outbox.stop()
        if self.live is not None:
            live, self.live = self.live, None
            await registry.detach(live, self)

    async def dispatch(self, message: dict[str, Any]) -> None:
        """Channels closes stale DB connections before every handler, a thread hop each time. A
        frame from the browser never touches the database here (host calls run in worker threads,
        the ownership check in `connect` closes its own), so frames skip it; connect and
        disconnect keep it."""
        if message["type"] == "websocket.receive":
            await self.websocket_receive(message)
        else:
            await super().dispatch(message)

    # -- in -----------------------------------------------------------------------------------
    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        request: dict[str, Any] = {}
        try:
            request = _parse(text_data, bytes_data)
            handler = self.HANDLERS.get(request.get("type"))
            if handler is None:
                raise ProtocolError(f"Unknown message type {request.get('type')!r} "
                                    f"(known: {', '.join(self.HANDLERS)})")
            if self.live is None:
                raise ProtocolError("This socket is not attached to a lab session")
            if not fairness.command_allowed(self.visitor):
                raise HostError(fairness.command_refusal(), "THROTTLING_QUOTA_EXCEEDED")
            await getattr(self, handler)(request)
        except ProtocolError as error:
            await self._error(request or _id_of(text_data), str(error), "INVALID_REQUEST")
        except HostError as error:
            await self._error(request, error.message, error.kafka_error)
        except Exception:  # never let one message take the socket down
            logger.exception("lab socket: %r failed", request.get("type"))
            await self._error(request, "The server failed on that message (see its log)", "UNKNOWN_SERVER_ERROR")

    async def on_command(self, request: dict[str, Any]) -> None:
        command = _field(request, "command", str)
        args = request.get("args", {})
        if not isinstance(args, dict):
            raise ProtocolError("'args' must be an object")
        discard = request.get("discard_future", False)
        if not isinstance(discard, bool):
            raise ProtocolError(f"'discard_future' must be true or false, not {discard!r}")
        outcome = await self.live.command(command, args, discard_future=discard)
        record = outcome.result.record
        await self.send(text_data=ack_frame(request.get("id"), record.mark() if record else None,
                                            getattr(outcome.result, "warnings", [])))

    async def on_clock(self, request: dict[str, Any]) -> None:
        action = request.get("action")
        live, host = self.live, self.live.host
        if action == "play":
            await live.call(host.play, _speed(request, required=False))
        elif action == "pause":
            await live.call(host.pause)
        elif action == "speed":
            await live.call(host.set_speed, _speed(request, required=True))
        elif action == "step":
            await live.call(host.step, urgent=True)
        elif action == "step_until":
            await live.call(host.step_until, _field(request, "kind", str), urgent=True)
        elif action == "rewind":
            extra = {name: request.get(name) for name in ("after_seq", "commands")}
            for name, value in extra.items():
                if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                    raise ProtocolError(f"'{name}' must be a whole number, not {value!r}")
            await live.rewind(_field(request, "to", int), extra["after_seq"], extra["commands"])
        else:
            raise ProtocolError(f"Unknown clock action {action!r} (known: {', '.join(CLOCK_ACTIONS)})")

    async def on_load_scenario(self, request: dict[str, Any]) -> None:
        scenario = request.get("scenario")
        if isinstance(scenario, str):
            if scenario not in builtin_names():
                raise ProtocolError(f"No built-in scenario {scenario!r} (built-ins: {', '.join(builtin_names())})")
            try:
                scenario = load_scenario(scenario)
            except ScenarioError as error:
                raise ProtocolError(str(error)) from None
        if not isinstance(scenario, dict):
            raise ProtocolError("'scenario' must be a scenario object (or a built-in scenario's name)")
        cluster = scenario.get("cluster")
        if isinstance(cluster, dict):   # its shape within this session's limits (the host checks the rest)
            _checked_shape(self.live.host.limits, cluster.get("brokers", 3), cluster.get("seed", 0),
                           cluster.get("truncation"), cluster.get("config"))
        await self.live.load_scenario(scenario)

    async def on_reset(self, request: dict[str, Any]) -> None:
        current = self.live.host.shape
        shape = _checked_shape(self.live.host.limits, request.get("brokers", current.brokers),
                               request.get("seed", current.seed), request.get("truncation", current.truncation),
                               request.get("config", current.config))
        await self.live.reset(shape)

    async def on_snapshot(self, request: dict[str, Any]) -> None:
        await self.send(text_data=await self.live.state_text())

    async def on_undo(self, request: dict[str, Any]) -> None:
        await self.live.undo_discard()

    async def on_pointer(self, request: dict[str, Any]) -> None:
        """A highlight on a broker, a replica or an event for every tab and watcher (classroom.pointer)."""
        await pointer.place(self.live, request.get("target"))

    async def on_history(self, request: dict[str, Any]) -> None:
        before = request.get("before_seq")
        if before is not None and (isinstance(before, bool) or not isinstance(before, int) or before < 0):
            raise ProtocolError(f"'before_seq' must be an event number, not {before!r}")
        limit = request.get("limit", 200)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= HISTORY_PAGE_MAX:
            raise ProtocolError(f"'limit' must be a whole number from 1 to {HISTORY_PAGE_MAX}, not {limit!r}")
        flags = {name: request.get(name, False) for name in ("internal", "network")}
        for name, value in flags.items():
            if not isinstance(value, bool):
                raise ProtocolError(f"'{name}' must be true or false, not {value!r}")
        kinds = request.get("kinds")
        if kinds is not None and (not isinstance(kinds, list) or not all(isinstance(k, str) for k in kinds)):
            raise ProtocolError("'kinds' must be a list of event kinds")
        page = await self.live.history_page(before, limit, flags["internal"], flags["network"], kinds)
        await self.send_json(message("history", id=request.get("id"), **page))

    # -- out ----------------------------------------------------------------------------------
    async def deliver(self, text: str) -> None:
        """A message for every tab of the session (from its LiveSession), already JSON: queued."""
        await self.send(text_data=text)

    async def send(self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False) -> None:
        """Every message to the browser waits its turn in the tab's TabQueue (in order, bounded)."""
        if self.outbox is not None and text_data is not None and not close:
            self.outbox.put(text_data)
        else:
            await super().send(text_data, bytes_data, close)

    async def _send_now(self, text: str) -> None:
        await super().send(text_data=text)

    async def _resync(self, whole: bool) -> tuple[list[str], int]:
        """What replaces the messages this tab's queue dropped (lab.send_queue)."""
        if self.live is None:
            return [], 0
        return await self.live.resync_texts(whole)

    async def _close_slow(self, code: int) -> None:
        """The tab could not keep up (lab.send_queue): close it; it reconnects and says hello."""
        await self.close(code=code)

    async def end(self, code: int) -> None:
        """The session is gone (deleted): close this tab."""
        self.live = None
        if self.outbox is not None:
            self.outbox.stop()
        await self.close(code=code)

    async def _error(self, request: dict[str, Any], text: str, kafka_error: str | None) -> None:
        fields: dict[str, Any] = {"message": text, "kafka_error": kafka_error}
        if isinstance(request, dict) and "id" in request:
            fields["id"] = request["id"]
        await self.send_json(message("error", **fields))


def _parse(text_data: str | None, bytes_data: bytes | None) -> dict[str, Any]:
    if text_data is None:
        raise ProtocolError("Send JSON text frames, not binary ones")
    if len(text_data) > MAX_FRAME_BYTES or len(text_data.encode("utf-8")) > MAX_FRAME_BYTES:
        raise ProtocolError(f"A message may be at most {MAX_FRAME_BYTES // 1024} KiB")
    try:
        request = json.loads(text_data, parse_constant=_not_a_number)
    except ValueError as error:
        raise ProtocolError(f"Not valid JSON: {error}") from None
    if not isinstance(request, dict):
        raise ProtocolError("A message is a JSON object with \"v\" and \"type\"")
    if request.get("v") != PROTOCOL_VERSION:
        raise ProtocolError(f"Unsupported protocol version {request.get('v')!r}: this server speaks v{PROTOCOL_VERSION}")
    return request


def _id_of(text_data: str | None) -> dict[str, Any]:
    """The `id` of a frame that did not parse (so its error still answers it), if one is readable."""
    match = re.search(r'"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,64}")\s*[,}]', text_data or "")
    return {"id": json.loads(match.group(1))} if match else {}


def _not_a_number(name: str) -> None:
    """JSON has no NaN or Infinity; Python's parser takes them unless told otherwise."""
    raise ValueError(f"{name} is not a number JSON allows")


def _checked_shape(limits: Limits, brokers: Any, seed: Any, truncation: Any, config: Any) -> Shape:
    """A reset's or a scenario's cluster shape, checked whole before anything changes (lab.limits)."""
    try:
        return limits.check_shape(brokers, seed, truncation, config)
    except LimitExceeded as error:
        raise HostError(str(error), error.kafka_name) from None


def _field(request: dict[str, Any], name: str, kind: type) -> Any:
    value = request.get(name)
    if value is None:
        raise ProtocolError(f"{request.get('type')} needs a {name!r} field")
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ProtocolError(f"{name!r} must be {'a number' if kind is int else 'a ' + kind.__name__}, not {value!r}")
    return value


def _speed(request: dict[str, Any], *, required: bool) -> float | None:
    speed = request.get("speed")
    if speed is None and not required:
        return None
    if speed is None:
        raise ProtocolError("speed needs a 'speed' field (0.1 to 10)")
    if isinstance(speed, bool) or not isinstance(speed, (int, float)):
        raise ProtocolError(f"'speed' must be a number, not {speed!r}")
    return speed


@database_sync_to_async
def _owns(owner: str, session_id: uuid.UUID) -> bool:
    """The visitor owns the session, or a live broadcast of it handed them its controls."""
    from classroom.broadcast import controller_session_ids  # the classroom app builds on the lab's
    return LabSession.objects.filter(pk=session_id, owner=owner).exists() or session_id in controller_session_ids(owner)
