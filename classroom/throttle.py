"""Counting failures: failed sign-ins per (username, visitor) and wrong join codes per visitor.

A visitor here is the client's address (REMOTE_ADDR): a session cookie would be dropped by whoever
guesses. Counts sit in Django's cache (the default is in the process's memory, so they hold within
one server process, which is what `make run` is; a shared cache makes them hold across processes).
A window opens at the first failure and closes `window_s` later; `limit` failures inside it lock
the pair out until the window closes. A success clears the sign-in count.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

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


SIGN_IN = FailureLimit("sign-in", limit=5, window_s=15 * 60)
JOIN_CODE = FailureLimit("join-code", limit=10, window_s=10 * 60)


def visitor(request: HttpRequest) -> str:
    return request.META.get("REMOTE_ADDR") or "unknown"
