"""Fairness between the visitors of one server: what one visitor may take, so that another still
gets a lab that answers.

A visitor is a Django session key (no accounts). Three caps, each a setting with a default that a
learner never reaches by hand:

- KAFKA_LAB_MAX_HOSTS_PER_VISITOR (20): a visitor's sessions in this process's memory
  (lab.registry evicts their own longest-idle one first, or refuses to load one more);
- KAFKA_LAB_COMMANDS_PER_S_PER_VISITOR (50): messages a visitor's tabs may send a second, over
  all their tabs (a token bucket holding one second's worth: a burst of 50 goes through);
- KAFKA_LAB_SESSIONS_CREATED_PER_MIN (20): lab sessions a visitor may create in a minute;
- KAFKA_LAB_CALLS_IN_FLIGHT_PER_VISITOR (1): host calls of one visitor running at once in
  asyncio's worker threads (a handful, shared by every session: fifty commands a second of one
  visitor once filled them, and another visitor's command queued behind them for 0.5 s);
- KAFKA_LAB_VISITOR_TICK_SHARE (0.25): the share of wall time a visitor's live clocks may spend
  ticking (measured, over about a second): a visitor over it has its clocks skipped, so their
  clusters run slower than asked, while other visitors' sessions tick as usual.

Settings are read with getattr(settings, NAME) and, when lab.settings does not define them (yet),
from the environment, so a test's Daphne can set them.
"""
from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.http import HttpResponse
from django.utils import timezone

# WebSocket close codes (autobahn lets a server send only 1000 and 3000-4999).
CLOSE_VISITOR_FULL = 4429    # this visitor holds its cap of sessions in memory, all in use
CLOSE_SERVER_FULL = 4503     # the server holds its cap of sessions, all in use: try again later

DEFAULTS = {"KAFKA_LAB_MAX_HOSTS_PER_VISITOR": 20, "KAFKA_LAB_COMMANDS_PER_S_PER_VISITOR": 50,
            "KAFKA_LAB_SESSIONS_CREATED_PER_MIN": 20, "KAFKA_LAB_VISITOR_TICK_SHARE": 0.25,
            "KAFKA_LAB_CALLS_IN_FLIGHT_PER_VISITOR": 1}


def setting(name: str, default: int | float) -> int | float:
    """A number from lab.settings, else from the environment, else `default`."""
    value = getattr(settings, name, None)
    if value is None:
        value = os.environ.get(name)
    if value is None or value == "":
        return default
    return type(default)(value)


class Refused(Exception):
    """A session this process will not load now; said to the tab (an `error`), which is then
    closed with `close_code` (CLOSE_VISITOR_FULL or CLOSE_SERVER_FULL)."""

    def __init__(self, message: str, close_code: int) -> None:
        super().__init__(message)
        self.message = message
        self.close_code = close_code


@dataclass
class _Bucket:
    tokens: float
    at: float


@dataclass
class RateLimiter:
    """A token bucket per visitor: `rate` a second, holding at most `rate` (one second's worth).
    Buckets that have filled up again are forgotten, so memory follows the visitors active in the
    last second or so."""
    rate: float
    buckets: dict[str, _Bucket] = field(default_factory=dict)

    def allow(self, visitor: str, now: float | None = None) -> bool:
        now = time.monotonic() if now is None else now
        bucket = self.buckets.get(visitor)
        if bucket is None:
            bucket = self.buckets[visitor] = _Bucket(self.rate, now)
            if len(self.buckets) > 1000:
                self._forget_full(now)
        bucket.tokens = min(self.rate, bucket.tokens + (now - bucket.at) * self.rate)
        bucket.at = now
        if bucket.tokens < 1:
            return False
        bucket.tokens -= 1
        return True

    def _forget_full(self, now: float) -> None:
        for visitor in [v for v, b in self.buckets.items() if b.tokens + (now - b.at) * self.rate >= self.rate]:
            del self.buckets[visitor]


_command_rates: dict[float, RateLimiter] = {}


def command_allowed(visitor: str) -> bool:
    """May this visitor's tabs send one more message now? (KAFKA_LAB_COMMANDS_PER_S_PER_VISITOR;
    0 or less: no cap)."""
    rate = float(setting("KAFKA_LAB_COMMANDS_PER_S_PER_VISITOR", DEFAULTS["KAFKA_LAB_COMMANDS_PER_S_PER_VISITOR"]))
    if rate <= 0:
        return True
    limiter = _command_rates.get(rate) or _command_rates.setdefault(rate, RateLimiter(rate))
    return limiter.allow(visitor)


def command_refusal() -> str:
    rate = setting("KAFKA_LAB_COMMANDS_PER_S_PER_VISITOR", DEFAULTS["KAFKA_LAB_COMMANDS_PER_S_PER_VISITOR"])
    return (f"Too many requests: your tabs may send at most {rate:g} a second (over all of them); "
            "this one was not run")


def max_hosts_per_visitor() -> int:
    return int(setting("KAFKA_LAB_MAX_HOSTS_PER_VISITOR", DEFAULTS["KAFKA_LAB_MAX_HOSTS_PER_VISITOR"]))


def too_many_sessions_created(visitor: str) -> HttpResponse | None:
    """A 429 answer if `visitor` created KAFKA_LAB_SESSIONS_CREATED_PER_MIN lab sessions in the last
    minute, else None. Counted in the database: it holds across processes and restarts."""
    from lab.models import LabSession  # the app registry is ready by the time a view runs

    cap = int(setting("KAFKA_LAB_SESSIONS_CREATED_PER_MIN", DEFAULTS["KAFKA_LAB_SESSIONS_CREATED_PER_MIN"]))
    if cap <= 0:
        return None
    since = timezone.now() - timedelta(minutes=1)
    if LabSession.objects.filter(owner=visitor, created__gte=since).count() < cap:
        return None
    response = HttpResponse(f"You created {cap} lab sessions in the last minute, the most a visitor may; "
                            "wait a minute, or open one you have.", status=429,
                            content_type="text/plain; charset=utf-8")
    response["Retry-After"] = "60"
    return response


@dataclass
class TickShares:
    """Each visitor's live-clock work, as a bucket of seconds that fills at `share` a second and
    holds at most `share` seconds: a tick is allowed while the bucket is positive, and its
    measured duration is taken out after. Touched only by the live clock's worker thread."""
    buckets: dict[str, _Bucket] = field(default_factory=dict)

    def may_tick(self, visitor: str | None, share: float, now: float) -> bool:
        if visitor is None or share <= 0:
            return True
        bucket = self.buckets.setdefault(visitor, _Bucket(share, now))
        bucket.tokens = min(share, bucket.tokens + (now - bucket.at) * share)
        bucket.at = now
        return bucket.tokens > 0

    def spent(self, visitor: str | None, seconds: float) -> None:
        bucket = self.buckets.get(visitor) if visitor is not None else None
        if bucket is not None:
            bucket.tokens -= seconds


tick_shares = TickShares()


def tick_share() -> float:
    return float(setting("KAFKA_LAB_VISITOR_TICK_SHARE", DEFAULTS["KAFKA_LAB_VISITOR_TICK_SHARE"]))


_call_slots: dict[tuple[int, str], asyncio.Semaphore] = {}


@contextlib.asynccontextmanager
async def call_slot(visitor: str | None) -> AsyncIterator[None]:
    """Hold one of `visitor`'s KAFKA_LAB_CALLS_IN_FLIGHT_PER_VISITOR slots for a host call: the
    rest of their calls wait on the event loop, not in the worker threads' queue."""
    slots = int(setting("KAFKA_LAB_CALLS_IN_FLIGHT_PER_VISITOR", DEFAULTS["KAFKA_LAB_CALLS_IN_FLIGHT_PER_VISITOR"]))
    if visitor is None or slots <= 0:
        yield
        return
    key = (id(asyncio.get_running_loop()), visitor)   # a semaphore belongs to one event loop
    semaphore = _call_slots.get(key)
    if semaphore is None:
        semaphore = _call_slots[key] = asyncio.Semaphore(slots)
    async with semaphore:
        yield
    if not semaphore.locked() and len(_call_slots) > 1000:
        _call_slots.pop(key, None)   # idle: forget it (a new one is made when needed)
