"""The simulated network: seeded delays, per-link FIFO, loss, cut links, down and slow nodes."""
from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from engine.events import EventBus, MessageDropped, MessageSent
from engine.network import Network
from engine.sim import Scheduler


@dataclass
class PingRequest:
    n: int


class Wire:
    """A network with two attached nodes that record what they receive, and an event journal."""

    def __init__(self, seed: int = 1, **options) -> None:
        self.scheduler = Scheduler()
        self.bus = EventBus(lambda: self.scheduler.now_ms)
        self.events: list = []
        self.bus.subscribe(self.events.append)
        self.network = Network(self.scheduler, random.Random(seed), self.bus, **options)
        self.received: dict[str, list[tuple[int, str, int]]] = {"a": [], "b": []}
        for node in self.received:
            self.network.attach(node, self._handler(node))

    def _handler(self, node: str):
        return lambda src, message: self.received[node].append((self.scheduler.now_ms, src, message.n))

    def send(self, src: str, dst: str, n: int, **kwargs) -> int:
        return self.network.send(src, dst, PingRequest(n), {"n": n}, **kwargs)

    def run(self) -> None:
        while self.scheduler.step() is not None:
            pass

    def of(self, kind: type) -> list:
        return [e for e in self.events if isinstance(e, kind)]


def test_it_delivers_each_message_within_the_configured_delay():
    wire = Wire(min_delay_ms=2, max_delay_ms=9)
    for n in range(200):
        wire.scheduler.advance_to(n * 20)  # spaced out, so FIFO never holds a message back
        wire.send("a", "b", n)
        wire.run()
    delays = [sent.arrive_ms - sent.send_ms for sent in wire.of(MessageSent)]
    assert all(2 <= d <= 9 for d in delays)
    assert {2, 9} <= set(delays)  # both bounds are reachable
    assert [(t - 20 * n) for (t, _, n) in wire.received["b"]] == delays


def test_it_delivers_at_exactly_the_announced_arrival_time():
    wire = Wire(min_delay_ms=1, max_delay_ms=50, seed=3)
    for n in range(30):
        wire.send("a", "b", n)
    wire.run()
    arrivals = {e.message_id: e.arrive_ms for e in wire.of(MessageSent)}
    assert [t for t, _, _ in wire.received["b"]] == [arrivals[i] for i in sorted(arrivals)]


def test_it_keeps_messages_on_one_link_in_send_order_despite_random_delays():
    wire = Wire(min_delay_ms=1, max_delay_ms=100, seed=11)
    for n in range(100):
        wire.send("a", "b", n)
        wire.send("b", "a", n)
    wire.run()
    assert [n for _, _, n in wire.received["b"]] == list(range(100))
    assert [n for _, _, n in wire.received["a"]] == list(range(100))
    times = [t for t, _, _ in wire.received["b"]]
    assert times == sorted(times)


def test_it_publishes_message_sent_with_who_what_and_when():
    wire = Wire(min_delay_ms=3, max_delay_ms=3)
    wire.scheduler.advance_to(10)
    message_id = wire.send("a", "b", 7)
    [sent] = wire.of(MessageSent)
    assert (sent.message_id, sent.api, sent.src, sent.dst) == (message_id, "Ping", "a", "b")
    assert (sent.send_ms, sent.arrive_ms, sent.summary, sent.time_ms) == (10, 13, {"n": 7}, 10)


def test_it_drops_a_message_sent_over_a_cut_link_at_once():
    wire = Wire()
    wire.network.cut("b", "a")  # a cut is symmetric
    message_id = wire.send("a", "b", 1)
    [sent], [dropped] = wire.of(MessageSent), wire.of(MessageDropped)
    assert sent.arrive_ms == -1
    assert (dropped.message_id, dropped.reason, dropped.time_ms) == (message_id, "link cut", 0)
    assert wire.scheduler.pending() == 0
    wire.run()
    assert wire.received["b"] == []


def test_it_drops_a_message_whose_link_is_cut_while_it_is_in_flight():
    wire = Wire(min_delay_ms=5, max_delay_ms=5)
    wire.send("a", "b", 1)
    wire.network.cut("a", "b")
    wire.run()
    assert wire.received["b"] == []
    [dropped] = wire.of(MessageDropped)
    assert (dropped.reason, dropped.time_ms) == ("link cut", 5)
    assert wire.of(MessageSent)[0].arrive_ms == 5  # it looked deliverable when it left


def test_it_delivers_again_once_the_link_is_healed():
    wire = Wire()
    wire.network.cut("a", "b")
    assert wire.network.is_cut("b", "a") and wire.network.cut_links() == [("a", "b")]
    wire.network.heal("b", "a")
    assert not wire.network.is_cut("a", "b") and wire.network.cut_links() == []
    wire.send("a", "b", 1)
    wire.run()
    assert [n for _, _, n in wire.received["b"]] == [1]


def test_it_drops_a_message_that_arrives_at_a_node_that_is_down():
    wire = Wire(min_delay_ms=2, max_delay_ms=2)
    wire.network.set_up("b", False)
    wire.send("a", "b", 1)
    wire.run()
    assert wire.received["b"] == []
    [dropped] = wire.of(MessageDropped)
    assert (dropped.reason, dropped.time_ms) == ("destination down", 2)


def test_it_delivers_to_a_node_that_came_back_before_the_message_arrived():
    wire = Wire(min_delay_ms=5, max_delay_ms=5)
    wire.network.set_up("b", False)
    wire.send("a", "b", 1)
    wire.scheduler.schedule(1, lambda: wire.network.set_up("b", True))
    wire.run()
    assert wire.received["b"] == [(5, "a", 1)]


def test_it_drops_a_message_to_a_node_that_was_never_attached():
    wire = Wire()
    wire.send("a", "nowhere", 1)
    wire.run()
    assert [d.reason for d in wire.of(MessageDropped)] == ["destination down"]


def _lost_ids(seed: int, loss_rate: float = 0.3, count: int = 300) -> list[int]:
    wire = Wire(seed=seed, loss_rate=loss_rate)
    for n in range(count):
        wire.send("a", "b", n)
    wire.run()
    lost = [d.message_id for d in wire.of(MessageDropped) if d.reason == "loss"]
    announced = [e.message_id for e in wire.of(MessageSent) if e.arrive_ms == -1]
    assert lost == announced  # MessageSent already says it will not arrive
    assert len(wire.received["b"]) == count - len(lost)
    return lost


def test_it_loses_the_same_messages_for_the_same_seed():
    assert _lost_ids(seed=42) == _lost_ids(seed=42)
    assert _lost_ids(seed=42) != _lost_ids(seed=43)


def test_it_loses_roughly_the_configured_share_of_messages():
    assert 0.2 * 300 < len(_lost_ids(seed=7, loss_rate=0.3)) < 0.4 * 300


def test_it_loses_nothing_with_the_default_options():
    assert _lost_ids(seed=7, loss_rate=0.0) == []


def test_it_adds_a_slow_nodes_extra_delay_in_either_direction():
    wire = Wire(min_delay_ms=1, max_delay_ms=1)
    wire.network.slow("b", 40)
    wire.send("a", "b", 1)
    wire.send("b", "a", 2)
    wire.run()
    assert wire.received["b"] == [(41, "a", 1)] and wire.received["a"] == [(41, "b", 2)]


def test_it_removes_the_extra_delay_when_a_node_is_slowed_by_zero():
    wire = Wire(min_delay_ms=1, max_delay_ms=1)
    wire.network.slow("b", 40)
    wire.network.slow("b", 0)
    wire.send("a", "b", 1)
    wire.run()
    assert wire.received["b"] == [(1, "a", 1)]


def test_it_keeps_fifo_when_a_slow_node_recovers():
    wire = Wire(min_delay_ms=1, max_delay_ms=1)
    wire.network.slow("b", 100)
    wire.send("a", "b", 1)
    wire.network.slow("b", 0)
    wire.send("a", "b", 2)
    wire.run()
    assert [n for _, _, n in wire.received["b"]] == [1, 2]


def test_it_marks_deliveries_as_foreground_work_unless_told_otherwise():
    wire = Wire()
    wire.send("a", "b", 1, foreground=False)
    assert not wire.scheduler.has_foreground_work()
    wire.send("a", "b", 2)
    assert wire.scheduler.has_foreground_work()


@pytest.mark.parametrize("options", [{"min_delay_ms": 5, "max_delay_ms": 4}, {"min_delay_ms": -1},
                                     {"loss_rate": 1.0}, {"loss_rate": -0.1}])
def test_it_rejects_impossible_options(options):
    with pytest.raises(ValueError):
        Wire(**options)
