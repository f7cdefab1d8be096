"""KRaft's StripedReplicaPlacer: Kafka's StripedReplicaPlacerTest, translated.

Kafka's tests use MockRandom (a fixed linear congruential `next(bits)`); `JavaMockRandom` below is
that generator behind Python's Random interface — Java's `nextInt(bound)` as `_randbelow`, which is
what both `randrange` and `shuffle` (the same swaps as Collections.shuffle) draw from — so the
expected placements are Kafka's own, number for number.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from engine.replication.assignment import (
    InvalidReplicationFactorError,
    StripedReplicaPlacer,
    _BrokerList,
    place_replicas_striped,
)

MASK64 = (1 << 64) - 1


class JavaMockRandom(random.Random):
    """org.apache.kafka.server.util.MockRandom (state 17), with java.util.Random's nextInt(bound)."""

    def __init__(self, state: int = 17) -> None:
        super().__init__(0)
        self.state = state

    def _next(self, bits: int) -> int:
        self.state = (self.state * 2862933555777941757 + 3037000493) & MASK64
        return self.state >> (64 - bits)

    def _randbelow(self, n: int) -> int:  # type: ignore[override]
        r = self._next(31)
        m = n - 1
        if n & m == 0:
            return (n * r) >> 31
        u = r
        while True:
            r = u % n
            if u - r + m < 2**31:
                return r
            u = self._next(31)


def placer(brokers: list[tuple[int, str | None, bool]]) -> StripedReplicaPlacer:
    """A RackList over (id, rack, fenced) brokers, in the given order (as Kafka's iterator gives them)."""
    return StripedReplicaPlacer(JavaMockRandom(), [b for b, _, _ in brokers],
                                {b: r for b, r, _ in brokers if r is not None}, [b for b, _, f in brokers if f])


def test_the_broker_list_hands_out_each_broker_once_per_epoch_starting_one_further_each_epoch():
    brokers = _BrokerList()
    assert brokers.next(1) == -1
    brokers.brokers = [0, 1, 2, 3]
    assert [brokers.next(0) for _ in range(6)] == [0, 1, 2, 3, -1, -1]
    assert [brokers.next(1) for _ in range(5)] == [1, 2, 3, 0, -1]


def test_it_avoids_a_fenced_broker_when_it_can_on_a_single_rack():
    rack_list = placer([(3, None, False), (1, None, True), (0, None, False), (4, None, False), (2, None, False)])
    assert (rack_list.total, rack_list.unfenced, rack_list.rack_names) == (5, 4, [None])
    for bad in (0, -1):
        with pytest.raises(InvalidReplicationFactorError):
            rack_list.place(1, bad)
    assert [rack_list.place(1, 4)[0] for _ in range(5)] == [
        [3, 4, 0, 2], [4, 0, 2, 3], [0, 2, 3, 4], [2, 3, 4, 0], [0, 4, 3, 2]]


def test_a_multi_partition_topic_on_a_single_unfenced_broker():
    assert place_replicas_striped([0, 1], 3, 1, JavaMockRandom(), fenced=[1]) == [[0], [0], [0]]


def test_it_places_on_a_fenced_broker_when_it_must():
    rack_list = placer([(3, None, False), (1, None, True), (2, None, False)])
    assert [rack_list.place(1, 3)[0] for _ in range(4)] == [[3, 2, 1], [2, 3, 1], [3, 2, 1], [2, 3, 1]]


def test_it_stripes_over_several_racks():
    rack_list = placer([(11, "1", False), (10, "1", False), (30, "3", False), (31, "3", False),
                        (21, "2", False), (20, "2", True)])
    assert (rack_list.total, rack_list.unfenced, rack_list.rack_names) == (6, 5, ["1", "2", "3"])
    assert [rack_list.place(1, 4)[0] for _ in range(3)] == [[11, 21, 31, 10], [21, 30, 10, 20], [31, 11, 21, 30]]


def test_racks_with_only_fenced_brokers_never_lead():
    rack_list = placer([(11, "1", False), (10, "1", False), (30, "3", True), (31, "3", True),
                        (20, "2", True), (21, "2", True), (41, "4", False), (40, "4", True)])
    assert (rack_list.total, rack_list.unfenced) == (8, 3)
    assert [rack_list.place(1, 4)[0] for _ in range(3)] == [[41, 11, 21, 30], [10, 20, 31, 41], [41, 21, 30, 11]]


def test_all_brokers_fenced_is_refused():
    with pytest.raises(InvalidReplicationFactorError, match="All brokers are currently fenced."):
        place_replicas_striped([11, 10], 1, 1, JavaMockRandom(), racks={11: "1", 10: "1"}, fenced=[11, 10])


def test_too_few_brokers_is_refused():
    with pytest.raises(InvalidReplicationFactorError, match="only 2 broker"):
        place_replicas_striped([1, 2], 1, 3, random.Random(0))


def test_a_successful_placement():
    brokers = [0, 3, 2, 1]
    assert place_replicas_striped(brokers, 5, 3, JavaMockRandom()) == [
        [2, 3, 0], [3, 0, 1], [0, 1, 2], [1, 2, 3], [1, 0, 2]]


def test_an_even_distribution_of_replica_pairs():
    pairs = Counter(tuple(r) for r in place_replicas_striped([0, 1, 2, 3], 200, 2, JavaMockRandom()))
    assert pairs == {(0, 1): 14, (0, 2): 22, (0, 3): 14, (1, 0): 17, (1, 2): 17, (1, 3): 16,
                     (2, 0): 13, (2, 1): 17, (2, 3): 20, (3, 0): 20, (3, 1): 19, (3, 2): 11}


def test_each_partition_gets_one_replica_per_rack():
    racks = {b: "abc"[b % 3] for b in range(1, 10)}
    assignment = place_replicas_striped(sorted(racks), 90, 3, random.Random(4), racks=racks)
    assert all(len({racks[b] for b in r}) == 3 and len(set(r)) == 3 for r in assignment)
