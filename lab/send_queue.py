"""One tab's messages on their way out, bounded (docs/lab-protocol.md, "A tab that falls behind").

Daphne's `send` never waits: it hands the message to Twisted, whose transport buffers whatever the
socket cannot take yet, without limit. A tab that does not read its socket (a frozen browser, a
slow link, a hostile client) watching a busy session grew the server by megabytes a second. So
each tab has a TabQueue between its session and Daphne:

- a writer task sends the queued messages in order, but only while the tab's Twisted transport
  holds less than WRITE_WATER_BYTES: what the socket has not taken yet waits here, where it can be
  counted and dropped;
- what a tab holds (queued here + in its transport) stays under `limit_bytes`
  (KAFKA_LAB_TAB_QUEUE_BYTES): when a message would go over, the queued messages that a fresh
  model replaces — `events`, `state`, `hello`, `clock`, `timeline` — are dropped, and once the
  socket drains the tab gets a `state` (with the clock and the timeline; a `hello` if a hello was
  dropped) instead of the backlog. Answers (`ack`, `error`, `history`, `command_done`) are
  never dropped;
- a tab that still cannot keep up — more than KAFKA_LAB_TAB_MAX_RESYNCS_PER_MIN resyncs in a
  minute, answers alone over the limit, or a socket that takes nothing for KAFKA_LAB_TAB_STALL_S
  while messages wait — is closed with CLOSE_TOO_SLOW (4408; the page reconnects and starts
  from a `hello`);
- a message over Daphne's 1 MiB (Daphne would refuse it, and the tab would never know) is logged
  and replaced by a resync, never dropped silently.

QUEUE_STATS counts what every tab holds, for `/healthz?lab=1`.
"""
from __future__ import annotations

import asyncio
import logging
import re
import time
import weakref
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from lab.fairness import setting

logger = logging.getLogger(__name__)

CLOSE_TOO_SLOW = 4408                    # a WebSocket close code: this tab could not keep up
DAPHNE_MAX_MESSAGE_BYTES = 1024 * 1024   # autobahn refuses to send a bigger message (Daphne's default)
WRITE_WATER_BYTES = 256 * 1024           # the transport's backlog under which the next message goes
DRAIN_POLL_S = 0.02                      # how often a writer looks whether its transport drained
DEFAULT_LIMIT_BYTES = 4 * 1024 * 1024
REPLACEABLE = frozenset({"events", "state", "hello", "clock", "timeline"})   # a resync sends them anew
_HEAD = re.compile(r'\{"v": \d+, "type": "(\w+)"(?:, "frame": (\d+))?')


@dataclass(frozen=True)
class TabLimits:
    limit_bytes: int = DEFAULT_LIMIT_BYTES
    max_resyncs_per_min: int = 6
    stall_s: float = 30.0

    @classmethod
    def from_settings(cls) -> TabLimits:
        return cls(int(setting("KAFKA_LAB_TAB_QUEUE_BYTES", cls.limit_bytes)),
                   int(setting("KAFKA_LAB_TAB_MAX_RESYNCS_PER_MIN", cls.max_resyncs_per_min)),
                   float(setting("KAFKA_LAB_TAB_STALL_S", cls.stall_s)))


@dataclass
class QueueStats:
    """Every tab's queue in this process, counted (read by /healthz?lab=1 from another thread)."""
    resyncs: int = 0
    closed_slow: int = 0
    oversized: int = 0
    dropped: int = 0              # messages a resync replaced
    peak_tab_bytes: int = 0       # the most any one tab held since the process started

    def snapshot(self) -> dict[str, Any]:
        for _ in range(3):   # the set may change under us (another thread): try again
            try:
                held = [q.held_bytes() for q in list(_open_queues)]
                break
            except RuntimeError:
                continue
        else:
            held = []
        return {"tabs": len(held), "tab_bytes_max": max(held, default=0), "tab_bytes_total": sum(held),
                "tab_bytes_peak": self.peak_tab_bytes, "tab_limit_bytes": TabLimits.from_settings().limit_bytes,
                "resyncs": self.resyncs, "closed_slow": self.closed_slow, "oversized": self.oversized,
                "dropped": self.dropped}


QUEUE_STATS = QueueStats()
_open_queues: weakref.WeakSet[TabQueue] = weakref.WeakSet()


def head_of(text: str) -> tuple[str | None, int | None]:
    """A message's type and frame number, read from its first characters (every message of
    lab.registry starts `{"v": 2, "type": "…"`, frames then `"frame": N`)."""
    match = _HEAD.match(text, 0, 80)
    if match is None:
        return None, None
    return match.group(1), int(match.group(2)) if match.group(2) else None


def _utf8_size(text: str) -> int:
    return len(text) if len(text) * 4 <= DAPHNE_MAX_MESSAGE_BYTES else len(text.encode("utf-8"))


Resync = Callable[[bool], Awaitable[tuple[list[str], int]]]


class TabQueue:
    """A tab's outbox. `put` never waits (the session's pump must not wait for one slow tab);
    `send` writes one message to the socket, `resync(whole)` returns what replaces dropped
    messages (a `state`, clock and timeline; or a `hello` when `whole`) and the frame it stands
    at, `close(code)` ends the tab, `backlog()` is what its transport has not sent yet."""

    def __init__(self, send: Callable[[str], Awaitable[None]], resync: Resync, close: Callable[[int], Awaitable[None]],
                 backlog: Callable[[], int], limits: TabLimits | None = None) -> None:
        self._send, self._resync, self._close, self._backlog = send, resync, close, backlog
        self.limits = limits or TabLimits.from_settings()
        self._items: deque[tuple[str, str | None, int | None]] = deque()   # (text, type, frame)
        self._bytes = 0
        self._resync_wanted = False
        self._hello_lost = False
        self._resync_times: deque[float] = deque()
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self.closed = False
        _open_queues.add(self)

    def held_bytes(self) -> int:
        """What this tab holds: queued here and not yet sent by its transport."""
        return self._bytes + self._backlog()

    def put(self, text: str) -> None:
        if self.closed:
            return
        kind, frame = head_of(text)
        replaceable = kind in REPLACEABLE
        if replaceable and self._resync_wanted:
            self._hello_lost = self._hello_lost or kind == "hello"
            QUEUE_STATS.dropped += 1
            return   # the resync on its way supersedes it
        if self.held_bytes() + len(text) > self.limits.limit_bytes:
            self._fall_behind()
            if replaceable:
                self._hello_lost = self._hello_lost or kind == "hello"
                QUEUE_STATS.dropped += 1
                self._start()
                return
            if self.held_bytes() + len(text) > self.limits.limit_bytes:
                self._give_up("its answers alone are over the tab's limit")
                return
        self._items.append((text, kind, frame))
        self._bytes += len(text)
        self._note_peak()
        self._start()

    def stop(self) -> None:
        """The tab is gone: forget what waits."""
        self.closed = True
        self._items.clear()
        self._bytes = 0
        if self._task is not None and self._task is not asyncio.current_task():
            self._task.cancel()
        _open_queues.discard(self)

    # -- falling behind ---------------------------------------------------------------------------
    def _fall_behind(self) -> None:
        """Drop what a resync will replace; count the resync (too many in a minute: close)."""
        kept: deque[tuple[str, str | None, int | None]] = deque()
        for item in self._items:
            if item[1] in REPLACEABLE:
                self._hello_lost = self._hello_lost or item[1] == "hello"
                QUEUE_STATS.dropped += 1
            else:
                kept.append(item)
        self._items = kept
        self._bytes = sum(len(item[0]) for item in kept)
        if self._resync_wanted:
            return
        self._resync_wanted = True
        now = time.monotonic()
        self._resync_times.append(now)
        while self._resync_times and now - self._resync_times[0] > 60:
            self._resync_times.popleft()
        if len(self._resync_times) > self.limits.max_resyncs_per_min:
            self._give_up(f"{len(self._resync_times)} resyncs in a minute")

    def _give_up(self, why: str) -> None:
        if self.closed:
            return
        logger.warning("lab tab closed (%d, too slow): %s", CLOSE_TOO_SLOW, why)
        QUEUE_STATS.closed_slow += 1
        self.stop()
        asyncio.ensure_future(self._close(CLOSE_TOO_SLOW))

    def _note_peak(self) -> None:
        held = self.held_bytes()
        if held > QUEUE_STATS.peak_tab_bytes:
            QUEUE_STATS.peak_tab_bytes = held

    # -- the writer -----------------------------------------------------------------------------
    def _start(self) -> None:
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._write())
        self._wake.set()

    async def _write(self) -> None:
        try:
            while not self.closed:
                if not (self._items or self._resync_wanted):
                    self._wake.clear()
                    await self._wake.wait()
                    continue
                if not await self._drained():
                    return
                if self._resync_wanted:
                    await self._send_resync()
                    continue
                text, kind, _ = self._items.popleft()
                self._bytes -= len(text)
                if _utf8_size(text) > DAPHNE_MAX_MESSAGE_BYTES:
                    self._oversized(text, kind)
                    continue
                await self._send(text)
                self._note_peak()
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - a tab that went away must not leave a task failing loudly
            logger.debug("lab tab: its writer stopped", exc_info=True)
            self.stop()

    async def _drained(self) -> bool:
        """Wait until the transport can take more; False (the tab is closed) after a stall."""
        started = time.monotonic()
        while self._backlog() > WRITE_WATER_BYTES:
            if time.monotonic() - started > self.limits.stall_s:
                self._give_up(f"its socket took nothing for {self.limits.stall_s:g} s")
                return False
            await asyncio.sleep(DRAIN_POLL_S)
            if self.closed:
                return False
        return not self.closed

    def _oversized(self, text: str, kind: str | None) -> None:
        size = _utf8_size(text)
        logger.error("lab tab: a %r message of %d bytes is over Daphne's %d: not sent, the tab is resynced",
                     kind, size, DAPHNE_MAX_MESSAGE_BYTES)
        QUEUE_STATS.oversized += 1
        if kind == "hello":
            self._hello_lost = True
        if kind in REPLACEABLE or kind is None:
            self._resync_wanted = True

    async def _send_resync(self) -> None:
        whole, self._hello_lost, self._resync_wanted = self._hello_lost, False, False
        QUEUE_STATS.resyncs += 1
        texts, frame = await self._resync(whole)
        # Frames sealed before the resync's model (and queued meanwhile) are in it already.
        self._items = deque(item for item in self._items
                            if not (item[1] in ("events", "state") and item[2] is not None and item[2] <= frame))
        self._bytes = sum(len(item[0]) for item in self._items)
        for text in texts:
            if _utf8_size(text) > DAPHNE_MAX_MESSAGE_BYTES:
                logger.error("lab tab: its resync (%d bytes) is itself over Daphne's limit: closing it",
                             _utf8_size(text))
                QUEUE_STATS.oversized += 1
                self._give_up("its resync does not fit in one message")
                return
            await self._send(text)
        self._note_peak()


def transport_backlog(send: Any) -> Callable[[], int]:
    """How many bytes Daphne's Twisted transport under `send` (a consumer's base_send) holds
    unsent. ASGI gives an application no way to ask, so this finds Daphne's protocol object in
    the `functools.partial(server.handle_reply, protocol)` that Daphne passes as `send`, through
    the middleware wrappers around it. Without Daphne (Channels' test communicator) it is 0."""
    transport = _find_transport(send, depth=0, seen=set())
    if transport is None:
        return lambda: 0

    def backlog() -> int:
        # Twisted's FileDescriptor: dataBuffer[offset:] is unsent, _tempDataBuffer waits to join it.
        return (len(getattr(transport, "dataBuffer", b"")) - getattr(transport, "offset", 0)
                + getattr(transport, "_tempDataLen", 0))
    return backlog


def _find_transport(obj: Any, depth: int, seen: set[int]) -> Any:
    if obj is None or depth > 6 or id(obj) in seen:
        return None
    seen.add(id(obj))
    transport = getattr(obj, "transport", None)
    if transport is not None and hasattr(transport, "dataBuffer"):
        return transport
    candidates: list[Any] = []
    candidates += list(getattr(obj, "args", ()) or ()) + [getattr(obj, "func", None)]   # functools.partial
    candidates.append(getattr(obj, "__self__", None))                                  # a bound method
    candidates += [cell.cell_contents for cell in getattr(obj, "__closure__", None) or () if _filled(cell)]
    owner = getattr(obj, "__self__", None)
    if owner is not None:
        candidates += [v for k, v in vars(owner).items() if "send" in k] if hasattr(owner, "__dict__") else []
    for candidate in candidates:
        if isinstance(candidate, (str, bytes, int, float, dict, list)):
            continue
        found = _find_transport(candidate, depth + 1, seen)
        if found is not None:
            return found
    return None


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 - reading an empty cell raises ValueError, which is the test
    except ValueError:
        return False
    return True
