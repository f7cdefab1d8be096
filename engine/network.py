"""The simulated network between brokers and clients: delay, loss and cut links, all seeded.

A message is scheduled to arrive after a random delay (`network.min.delay.ms` to
`network.max.delay.ms`, plus any extra delay a slowed node has). Messages between the same two
nodes arrive in the order sent, as over one TCP connection. A message is lost if the link is cut
when it is sent or when it arrives, if the destination is down on arrival, or with probability
`network.loss.rate`. A lost message is simply never delivered: senders find out by time-out.
"""
from __future__ import annotations

import random
from collections.abc import Callable

from engine.events import EventBus, MessageDropped, MessageSent
from engine.protocol import api_name
from engine.sim import Scheduler

Handler = Callable[[str, object], None]


class Network:
    def __init__(self, scheduler: Scheduler, rng: random.Random, bus: EventBus, *,
                 min_delay_ms: int = 1, max_delay_ms: int = 3, loss_rate: float = 0.0) -> None:
        if not 0 <= min_delay_ms <= max_delay_ms:
            raise ValueError("network delays must satisfy 0 <= min <= max")
        if not 0.0 <= loss_rate < 1.0:
            raise ValueError("network.loss.rate must be in [0, 1)")
        self._scheduler = scheduler
        self._rng = rng
        self._bus = bus
        self.min_delay_ms, self.max_delay_ms, self.loss_rate = min_delay_ms, max_delay_ms, loss_rate
        self._handlers: dict[str, Handler] = {}
        self._up: dict[str, bool] = {}
        self._cut: set[frozenset[str]] = set()
        self._extra_delay: dict[str, int] = {}
        self._last_arrival: dict[tuple[str, str], int] = {}
        self._next_id = 0

    # -- nodes and faults -------------------------------------------------------------------
    def attach(self, node: str, handler: Handler) -> None:
        self._handlers[node] = handler
        self._up[node] = True

    def has_node(self, node: str) -> bool:
        return node in self._handlers

    def set_up(self, node: str, up: bool) -> None:
        self._up[node] = up

    def is_up(self, node: str) -> bool:
        """Whether `node`'s process runs (a node never attached is not up)."""
        return self._up.get(node, False)

    def cut(self, a: str, b: str) -> None:
        self._cut.add(frozenset((a, b)))

    def heal(self, a: str, b: str) -> None:
        self._cut.discard(frozenset((a, b)))

    def is_cut(self, a: str, b: str) -> bool:
        return frozenset((a, b)) in self._cut

    def cut_links(self) -> list[tuple[str, ...]]:
        """Each cut link's two node names, sorted (one name when a node was cut from itself)."""
        return sorted(tuple(sorted(link)) for link in self._cut)

    def slow_ms(self, node: str) -> int:
        """The extra delay a slowed node adds to every message it sends or receives (0: none)."""
        return self._extra_delay.get(node, 0)

    def nodes(self) -> list[str]:
        """Every node attached so far (brokers and clients), in the order they were attached."""
        return list(self._handlers)

    def slow(self, node: str, extra_delay_ms: int) -> None:
        if extra_delay_ms <= 0:
            self._extra_delay.pop(node, None)
        else:
            self._extra_delay[node] = extra_delay_ms

    # -- sending ----------------------------------------------------------------------------
    def send(self, src: str, dst: str, message: object, summary: dict | None = None, *,
             foreground: bool = True) -> int:
        """Put `message` on the wire; it reaches dst's handler later, or is lost."""
        self._next_id += 1
        message_id = self._next_id
        now = self._scheduler.now_ms
        delay = self._rng.randint(self.min_delay_ms, self.max_delay_ms)
        delay += self._extra_delay.get(src, 0) + self._extra_delay.get(dst, 0)
        arrive = max(now + delay, self._last_arrival.get((src, dst), 0))
        lost_in_transit = self.loss_rate > 0 and self._rng.random() < self.loss_rate
        api = api_name(message)
        cut_now = self.is_cut(src, dst)
        self._bus.publish(MessageSent(message_id=message_id, api=api, src=src, dst=dst, send_ms=now,
                                      arrive_ms=-1 if (cut_now or lost_in_transit) else arrive,
                                      summary=summary or {}))
        if cut_now:
            self._bus.publish(MessageDropped(message_id=message_id, api=api, src=src, dst=dst, reason="link cut"))
            return message_id
        self._last_arrival[(src, dst)] = arrive
        self._scheduler.schedule(
            arrive - now, lambda: self._deliver(message_id, api, src, dst, message, lost_in_transit),
            label=f"deliver {api} {src}->{dst}", foreground=foreground)
        return message_id

    def _deliver(self, message_id: int, api: str, src: str, dst: str, message: object, lost: bool) -> None:
        reason = None
        if lost:
            reason = "loss"
        elif self.is_cut(src, dst):
            reason = "link cut"
        elif not self._up.get(dst, False):
            reason = "destination down"
        if reason is not None:
            self._bus.publish(MessageDropped(message_id=message_id, api=api, src=src, dst=dst, reason=reason))
            return
        self._handlers[dst](src, message)
