"""Counting failures: failed sign-ins per (username, visitor) and per visitor, wrong join codes per
visitor.

A visitor here is the client's address: a session cookie would be dropped by whoever guesses.
Behind the TLS proxy lab.settings knows of (KAFKA_LAB_BEHIND_TLS_PROXY sets SECURE_PROXY_SSL_HEADER)
every REMOTE_ADDR is the proxy's, so the address is the last entry of X-Forwarded-For: the one the
proxy itself appended (earlier entries are the client's to invent).

Counts sit in Django's cache (the default is in the process's memory, so they hold within one
server process, which is what `make run` is; a shared cache makes them hold across processes).
A window opens at the first failure and closes `window_s` later; `limit` failures inside it lock
out until the window closes. A successful sign-in clears its (username, visitor) count.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest


@dataclass(frozen=True)
class FailureLimit:
    name: str
    limit: int
    window_s: int

    def _key(self, *parts: str) -> str:
        # Hashed: a username may hold characters a cache backend refuses in keys.
        digest = hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:32]
        return f"classroom:{self.name}:{digest}"

    def locked(self, *parts: str) -> bool:
        return int(cache.get(self._key(*parts), 0)) >= self.limit

    def failed(self, *parts: str) -> None:
        key = self._key(*parts)
        if cache.add(key, 1, self.window_s):
            return
        try:
            cache.incr(key)
        except ValueError:   # expired between add and incr: a new window
            cache.add(key, 1, self.window_s)

    def clear(self, *parts: str) -> None:
        cache.delete(self._key(*parts))

    @property
    def minutes(self) -> int:
        return max(1, self.window_s // 60)


SIGN_IN = FailureLimit("sign-in", limit=5, window_s=15 * 60)               # one name from one visitor
SIGN_IN_ANY_NAME = FailureLimit("sign-in-visitor", limit=30, window_s=15 * 60)   # many names from one
JOIN_CODE = FailureLimit("join-code", limit=10, window_s=10 * 60)


def visitor(request: HttpRequest) -> str:
    if getattr(settings, "SECURE_PROXY_SSL_HEADER", None):
        forwarded = request.META.get("HTTP_X_FORWARDED_FOR", "").split(",")[-1].strip()
        if forwarded:
            return forwarded[:64]
    return request.META.get("REMOTE_ADDR") or "unknown"
