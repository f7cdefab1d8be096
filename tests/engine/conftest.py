"""Shared helpers for engine tests (pure Python: no Django needed)."""
from __future__ import annotations

import pytest


class FakeClock:
    """Virtual milliseconds: tests move time explicitly, so runs are repeatable."""

    def __init__(self, start_ms: int = 1_700_000_000_000) -> None:
        self.now = start_ms

    def __call__(self) -> int:
        return self.now

    def advance(self, ms: int) -> int:
        self.now += ms
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()
