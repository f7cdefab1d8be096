"""Fairness between the visitors of one server: what one visitor may take, so that another still
gets a lab that answers.

A visitor is a Django session key (no accounts). Three caps, each a setting with a default that a
learner never reaches by hand:

- KAFKA_LAB_MAX_HOSTS_PER_VISITOR (20): a visitor's sessions in this process's memory
  (lab.registry evicts their own longest-idle one first, or refuses to load one more);
- KAFKA_LAB_COMMANDS_PER_S_PER_VISITOR (50): messages a visitor's tabs may send a second, over
  all their tabs (a token bucket holding one second's worth: a burst of 50 goes through);
- KAFKA_LAB_SESSIONS_CREATED_PER_MIN (20): lab sessions a visitor may create in a minute.

Settings are read with getattr(settings, NAME) and, when lab.settings does not define them (yet),
from the environment, so a test's Daphne can set them.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.http import HttpResponse
from django.utils import timezone

# WebSocket close codes (autobahn lets a server send only 1000 and 3000-4999).
CLOSE_VISITOR_FULL = 4429    # this visitor holds its cap of sessions in memory, all in use
CLOSE_SERVER_FULL = 4503     # the server holds its cap of sessions, all in use: try again later

DEFAULTS = {"KAFKA_LAB_MAX_HOSTS_PER_VISITOR": 20, "KAFKA_LAB_COMMANDS_PER_S_PER_VISITOR": 50,
            "KAFKA_LAB_SESSIONS_CREATED_PER_MIN": 20}


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
