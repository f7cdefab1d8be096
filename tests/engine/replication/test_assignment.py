"""Replica assignment for a new topic, checked against Kafka's rack-unaware algorithm.

Kafka's `AdminUtils.assignReplicasToBrokers(brokers, nPartitions, rf, fixedStartIndex, startPartitionId)`
draws the start index and the first replica shift at random unless `fixedStartIndex` is given, in
which case both equal it. Our function draws both from the rng it is handed (start index first), so
an rng that always answers `k` reproduces Kafka's `fixedStartIndex = k`.
"""
from __future__ import annotations

import random
from collections import Counter

import pytest

from engine.replication.assignment import (
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    assign_replicas,
    check_replica_assignment,
)


class FixedStart:
    """Stands in for random.Random: every `randrange(n)` answers `k` (Kafka's fixedStartIndex)."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.calls: list[int] = []

    def randrange(self, n: int) -> int:
        self.calls.append(n)
        return self.k % n


# Kafka: core/src/test/scala/unit/kafka/admin/AdminTest.scala testReplicaAssignment, later
# server-common AdminRackAwareTest.testReplicaAssignment: 5 brokers, 10 partitions, RF 3, fixedStartIndex 0.
KAFKA_5_BROKERS_10_PARTITIONS_RF3 = [
    [0, 1, 2], [1, 2, 3], [2, 3, 4], [3, 4, 0], [4, 0, 1],
    [0, 2, 3], [1, 3, 4], [2, 4, 0], [3, 0, 1], [4, 1, 2],
]


def test_it_matches_kafkas_own_expected_assignment():
    rng = FixedStart(0)
    assert assign_replicas([0, 1, 2, 3, 4], 10, 3, rng) == KAFKA_5_BROKERS_10_PARTITIONS_RF3
    assert rng.calls == [5, 5]  # start index, then the replica shift, each over the broker count


def test_it_matches_the_table_in_kafkas_assignment_docs():
    # AdminUtils' doc comment: 5 brokers, p0..p9, first replicas round robin, followers shifted.
    assignment = assign_replicas([0, 1, 2, 3, 4], 10, 3, FixedStart(0))
    second = {p: replicas[1] for p, replicas in enumerate(assignment)}
    third = {p: replicas[2] for p, replicas in enumerate(assignment)}
    assert [p for b in range(5) for p in range(10) if second[p] == b] == [4, 8, 0, 9, 1, 5, 2, 6, 3, 7]
    assert [p for b in range(5) for p in range(10) if third[p] == b] == [3, 7, 4, 8, 0, 9, 1, 5, 2, 6]


def test_it_follows_kafkas_steps_with_another_start_index_and_uneven_counts():
    # Worked by hand from assignReplicasToBrokersRackUnaware with fixedStartIndex 2 on brokers [1, 2, 3]:
    # start 2, shift 2; partition 3 wraps the brokers, so the shift becomes 3.
    assert assign_replicas([1, 2, 3], 5, 2, FixedStart(2)) == [[3, 1], [1, 2], [2, 3], [3, 2], [1, 3]]


def test_it_indexes_brokers_by_sorted_id_whatever_order_they_are_given_in():
    assert (assign_replicas([30, 10, 20], 6, 3, FixedStart(1))
            == assign_replicas([10, 20, 30], 6, 3, FixedStart(1)))
    assert assign_replicas([30, 10, 20], 1, 1, FixedStart(0)) == [[10]]


def test_it_gives_the_same_assignment_for_the_same_seed():
    assert (assign_replicas([1, 2, 3, 4], 12, 3, random.Random(5))
            == assign_replicas([1, 2, 3, 4], 12, 3, random.Random(5)))


@pytest.mark.parametrize("brokers, partitions, rf", [
    (1, 1, 1), (1, 4, 1), (2, 3, 2), (3, 5, 3), (3, 6, 2), (4, 7, 3), (5, 10, 3), (5, 25, 5), (6, 13, 4),
])
@pytest.mark.parametrize("seed", range(5))
def test_it_places_rf_distinct_brokers_per_partition_and_spreads_leaders_evenly(brokers, partitions, rf, seed):
    ids = [b * 10 + 1 for b in range(brokers)]
    assignment = assign_replicas(ids, partitions, rf, random.Random(seed))
    assert len(assignment) == partitions
    for p, replicas in enumerate(assignment):
        assert len(replicas) == rf and len(set(replicas)) == rf, f"seed={seed} partition={p}: {replicas}"
        assert set(replicas) <= set(ids)
    leaders = Counter(replicas[0] for replicas in assignment)
    counts = [leaders.get(b, 0) for b in ids]
    assert max(counts) - min(counts) <= 1, f"seed={seed}: leaders {counts}"
    if partitions % brokers == 0:
        replicas_per_broker = Counter(b for replicas in assignment for b in replicas)
        assert {replicas_per_broker[b] for b in ids} == {partitions * rf // brokers}, f"seed={seed}"


def test_it_allows_a_partition_count_that_is_not_a_multiple_of_the_brokers():
    assignment = assign_replicas([1, 2, 3], 5, 3, random.Random(0))
    assert sorted(Counter(r[0] for r in assignment).values()) == [1, 2, 2]


def test_it_varies_followers_after_the_partitions_wrap_around_the_brokers():
    assignment = assign_replicas([0, 1, 2, 3, 4], 10, 3, random.Random(1))
    first_round = {r[0]: r[1:] for r in assignment[:5]}
    second_round = {r[0]: r[1:] for r in assignment[5:]}
    assert all(first_round[leader] != second_round[leader] for leader in first_round)


def test_it_refuses_more_replicas_than_brokers_with_kafkas_message():
    with pytest.raises(InvalidReplicationFactorError) as error:
        assign_replicas([1, 2, 3], 3, 4, random.Random(0))
    assert str(error.value) == "Replication factor: 4 larger than available brokers: 3."
    assert error.value.kafka_name == "INVALID_REPLICATION_FACTOR"


@pytest.mark.parametrize("rf", [0, -1])
def test_it_refuses_a_replication_factor_below_one(rf):
    with pytest.raises(InvalidReplicationFactorError, match="Replication factor must be larger than 0"):
        assign_replicas([1, 2, 3], 3, rf, random.Random(0))


@pytest.mark.parametrize("partitions", [0, -3])
def test_it_refuses_a_partition_count_below_one(partitions):
    with pytest.raises(InvalidPartitionsError, match="Number of partitions must be larger than 0") as error:
        assign_replicas([1, 2, 3], partitions, 1, random.Random(0))
    assert error.value.kafka_name == "INVALID_PARTITIONS"


def test_it_refuses_any_replica_when_no_broker_is_live():
    with pytest.raises(InvalidReplicationFactorError, match="larger than available brokers: 0."):
        assign_replicas([], 1, 1, random.Random(0))


def test_a_hand_made_assignment_of_known_brokers_is_taken_as_given():
    given = [[2, 3], [3, 1]]
    assert check_replica_assignment(given, [1, 2, 3]) == given
    assert check_replica_assignment(given, [1, 2, 3]) is not given   # a copy: the caller's lists stay theirs


@pytest.mark.parametrize("assignment, kafka_name, message", [
    ([], "INVALID_REPLICA_ASSIGNMENT", "needs a non-empty broker list per partition"),
    ([[1], []], "INVALID_REPLICA_ASSIGNMENT", "needs a non-empty broker list per partition"),
    ([[1, 2], [3]], "INVALID_REPLICA_ASSIGNMENT", "may not contain different numbers of replicas"),
    ([[1, 1]], "INVALID_REPLICA_ASSIGNMENT", r"Duplicate brokers in replica assignment \[1, 1\]"),
    ([[1, 4]], "BROKER_NOT_AVAILABLE", r"Unknown broker\(s\) \[4\]"),
])
def test_a_hand_made_assignment_is_refused_as_kafkas_validate_replica_assignment_does(assignment, kafka_name, message):
    with pytest.raises(InvalidReplicaAssignmentError, match=message) as error:
        check_replica_assignment(assignment, [1, 2, 3])
    assert error.value.kafka_name == kafka_name
