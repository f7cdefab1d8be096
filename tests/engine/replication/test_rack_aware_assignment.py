"""Rack-aware replica assignment (ZooKeeper era): Kafka's AdminRackAwareTest and RackAwareTest, translated,
and the property the algorithm exists for — each partition's replicas cover min(replication factor,
racks) racks, never one broker twice. `start_index=k` is Kafka's fixedStartIndex=k."""
from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.replication.assignment import (
    InvalidPartitionsError,
    InvalidReplicationFactorError,
    RackInformationError,
    assign_replicas,
    rack_alternated_broker_list,
)

SIX_IN_THREE = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}


def assign(racks: dict[int, str], partitions: int, rf: int, start_index: int | None = None,
           start_partition_id: int = 0, seed: int = 0) -> list[list[int]]:
    return assign_replicas(sorted(racks), partitions, rf, random.Random(seed), start_index=start_index,
                           start_partition_id=start_partition_id, racks=racks)


def check_distribution(assignment: list[list[int]], racks: dict[int, str], rf: int, *, rack_aware: bool = True,
                       leaders_even: bool = True, replicas_even: bool = True) -> None:
    """RackAwareTest.checkReplicaDistribution."""
    for replicas in assignment:
        assert len(set(replicas)) == len(replicas), f"a broker holds two replicas of one partition: {replicas}"
    if rack_aware:
        assert [len({racks[b] for b in r}) for r in assignment] == [rf] * len(assignment), \
            "two replicas of one partition in one rack"
    if leaders_even:
        leaders = Counter(r[0] for r in assignment)
        assert sorted(leaders.values()) == [len(assignment) // len(racks)] * len(racks)
    if replicas_even:
        counts = Counter(b for r in assignment for b in r)
        assert sorted(counts.values()) == [len(assignment) * rf // len(racks)] * len(racks)


def test_the_rack_alternated_list_takes_one_broker_of_each_rack_in_turn():
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}

    assert rack_alternated_broker_list(racks) == [0, 3, 1, 5, 4, 2]
    assert rack_alternated_broker_list({b: r for b, r in racks.items() if b != 5}) == [0, 3, 1, 4, 2]


def test_kafka_s_own_example_assignment():
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2", 5: "rack1"}

    assert assign(racks, 7, 3, start_index=0) == [
        [0, 3, 1], [3, 1, 5], [1, 5, 4], [5, 4, 2], [4, 2, 0], [2, 0, 3],
        [0, 4, 2]]   # the second round shifts the followers instead of repeating [0, 3, 1]


@pytest.mark.parametrize("start_index", [2, None])
def test_six_partitions_rf3_spread_over_racks_leaders_and_replicas(start_index):
    check_distribution(assign(SIX_IN_THREE, 6, 3, start_index=start_index), SIX_IN_THREE, 3)


def test_uneven_replicas_stay_rack_aware():
    check_distribution(assign(SIX_IN_THREE, 13, 3, start_index=0), SIX_IN_THREE, 3,
                       leaders_even=False, replicas_even=False)


def test_uneven_racks_keep_leaders_even():
    racks = {0: "rack1", 1: "rack1", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1"}
    check_distribution(assign(racks, 12, 3), racks, 3, replicas_even=False)


@pytest.mark.parametrize("partitions", [12, 6])
def test_two_replicas_rack_aware(partitions):
    check_distribution(assign(SIX_IN_THREE, partitions, 2), SIX_IN_THREE, 2)


def test_two_replicas_on_three_brokers_in_three_racks():
    racks = {0: "rack1", 1: "rack2", 4: "rack3"}
    check_distribution(assign(racks, 3, 2), racks, 2)


def test_rack_aware_expansion_from_partition_12():
    racks = {6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack3", 11: "rack1"}
    check_distribution(assign(racks, 12, 2, start_partition_id=12), racks, 2)


def test_a_large_number_of_partitions():
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack1",
             6: "rack1", 7: "rack2", 8: "rack2", 9: "rack3", 10: "rack1", 11: "rack3"}
    check_distribution(assign(racks, 96, 3), racks, 3)


def test_more_replicas_than_racks_covers_every_rack():
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    assignment = assign(racks, 6, 5)
    assert [len(r) for r in assignment] == [5] * 6
    assert all(len({racks[b] for b in r}) == 3 for r in assignment)


def test_fewer_replicas_than_racks_puts_each_in_its_own_rack():
    racks = {0: "rack1", 1: "rack2", 2: "rack2", 3: "rack3", 4: "rack3", 5: "rack2"}
    assert all(len({racks[b] for b in r}) == 2 for r in assign(racks, 6, 2))


def test_a_single_rack_still_spreads_leaders():
    racks = dict.fromkeys(range(6), "rack1")
    assignment = assign(racks, 6, 3)
    assert Counter(r[0] for r in assignment) == Counter(range(6))


def test_a_broker_that_has_a_replica_is_skipped_while_another_has_none():
    racks = {0: "a", 1: "b", 2: "c", 3: "a", 4: "a"}
    check_distribution(assign(racks, 6, 4, start_index=2, start_partition_id=-1), racks, 4,
                       rack_aware=False, leaders_even=False, replicas_even=False)


def test_invalid_parameters_are_refused_as_kafka_refuses_them():
    racks = {0: "rack1", 1: "rack3", 2: "rack3", 3: "rack2", 4: "rack2"}
    with pytest.raises(InvalidPartitionsError):
        assign(racks, 0, 1)
    with pytest.raises(InvalidReplicationFactorError):
        assign(racks, 10, 0)
    with pytest.raises(InvalidReplicationFactorError):
        assign(racks, 10, 6)


def test_some_brokers_without_a_rack_is_refused_naming_them():
    with pytest.raises(RackInformationError, match=r"Not all brokers have rack information.*\[4\]"):
        assign_replicas([0, 1, 2, 3, 4], 10, 3, random.Random(0), racks={0: "r1", 1: "r3", 2: "r3", 3: "r2"})


def test_without_racks_the_assignment_is_the_rack_unaware_one():
    brokers = [1, 2, 3]
    plain = assign_replicas(brokers, 7, 2, random.Random(5))
    assert assign_replicas(brokers, 7, 2, random.Random(5), racks={}) == plain
    assert assign_replicas(brokers, 7, 2, random.Random(5), racks=None) == plain


def test_rack_aware_draws_as_many_random_numbers_as_rack_unaware():
    # The same seeded stream stays in step whether or not racks are set (both draw start index, then shift).
    a, b = random.Random(9), random.Random(9)
    assign_replicas([1, 2, 3], 4, 2, a)
    assign_replicas([1, 2, 3], 4, 2, b, racks={1: "x", 2: "y", 3: "z"})
    assert a.random() == b.random()


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.integers(0, 20), st.sampled_from("abcd"), min_size=1, max_size=9),
       st.integers(1, 30), st.data())
def test_every_partition_spans_as_many_racks_as_it_can(racks, partitions, data):
    rf = data.draw(st.integers(1, len(racks)))
    seed = data.draw(st.integers(0, 2**32))
    assignment = assign(racks, partitions, rf, seed=seed)
    rack_count = len(set(racks.values()))
    for replicas in assignment:
        assert len(replicas) == rf and len(set(replicas)) == rf, (seed, replicas)
        assert len({racks[b] for b in replicas}) == min(rf, rack_count), (seed, replicas)
