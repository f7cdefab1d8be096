"""A client's connection to the cluster: one node on the simulated network.

Producers, consumers and admin tools send requests to brokers through it. Each request gets a
correlation id; the answer comes back to `on_response(body)`, or, if none arrives within
`timeout_ms` (lost, link cut, broker down), `on_response(None)` — the client's request time-out.
A crashed client drops every answer still on its way.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from engine.protocol import RequestEnvelope, ResponseEnvelope

if TYPE_CHECKING:
    from engine.cluster import Cluster


class NetworkClient:
    def __init__(self, cluster: Cluster, name: str) -> None:
        self.cluster = cluster
        self.name = name
        self.alive = True
        self.incarnation = 1
        self._next_correlation = 0
        self._pending: dict[int, tuple[Callable[[object | None], None], object]] = {}
        cluster.network.attach(name, self._receive)

    def send(self, broker_id: int, request: object, on_response: Callable[[object | None], None], *,
             timeout_ms: int, summary: dict | None = None, foreground: bool = True) -> int:
        self._next_correlation += 1
        correlation = self._next_correlation
        timer = self.cluster.scheduler.schedule(
            timeout_ms, lambda: self._time_out(correlation), label=f"{self.name}: request time-out",
            foreground=foreground)
        self._pending[correlation] = (on_response, timer)
        self.cluster.network.send(self.name, f"broker-{broker_id}",
                                  RequestEnvelope(correlation, request, self.incarnation), summary or {},
                                  foreground=foreground)
        return correlation

    def send_no_answer(self, broker_id: int, request: object, summary: dict | None = None) -> None:
        """acks=0 style: put the request on the wire and expect nothing back."""
        self.cluster.network.send(self.name, f"broker-{broker_id}",
                                  RequestEnvelope(0, request, self.incarnation), summary or {})

    def _receive(self, src: str, message: object) -> None:
        if not self.alive or not isinstance(message, ResponseEnvelope) or message.incarnation != self.incarnation:
            return
        entry = self._pending.pop(message.correlation, None)
        if entry is not None:
            callback, timer = entry
            self.cluster.scheduler.cancel(timer)
            callback(message.body)

    def _time_out(self, correlation: int) -> None:
        entry = self._pending.pop(correlation, None)
        if entry is not None and self.alive:
            entry[0](None)

    def in_flight(self) -> int:
        return len(self._pending)

    def crash(self) -> None:
        """The client process dies: nothing it was waiting for will reach it."""
        self.alive = False
        for _, timer in self._pending.values():
            self.cluster.scheduler.cancel(timer)
        self._pending.clear()
        self.cluster.network.set_up(self.name, False)

    def restart(self) -> None:
        self.alive = True
        self.incarnation += 1
        self.cluster.network.set_up(self.name, True)
