"""Where a new topic's replicas go, as Kafka's rack-unaware assignment does it.

Brokers sorted by id; a random start index picks each partition's first replica round robin;
the other replicas follow the first at a shift that also starts random and grows by one each
time the partitions wrap around the brokers — so replicas spread evenly and followers do not
always sit on the same neighbour (Kafka's AdminUtils.assignReplicasToBrokersRackUnaware).
Any partition count works: with 5 partitions on 3 brokers some brokers lead two, one leads one.
"""
from __future__ import annotations

import random
from collections.abc import Iterable

from engine.common.errors import Errors, KafkaError


class InvalidReplicationFactorError(KafkaError, ValueError):
    error = Errors.INVALID_REPLICATION_FACTOR


class InvalidPartitionsError(KafkaError, ValueError):
    error = Errors.INVALID_PARTITIONS


class InvalidReplicaAssignmentError(KafkaError, ValueError):
    error = Errors.INVALID_REPLICA_ASSIGNMENT


def assign_replicas(brokers: list[int], partitions: int, replication_factor: int,
                    rng: random.Random, *, start_index: int | None = None,
                    start_partition_id: int = 0) -> list[list[int]]:
    """Replica lists for `partitions` new partitions numbered from `start_partition_id`.

    `start_index` fixes the first broker (and the first shift) as Kafka does when partitions are
    added to an existing topic; by default both are random."""
    if partitions <= 0:
        raise InvalidPartitionsError(f"Number of partitions must be larger than 0, got {partitions}.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError(
            f"Replication factor must be larger than 0, got {replication_factor}.")
    if replication_factor > len(brokers):
        raise InvalidReplicationFactorError(
            f"Replication factor: {replication_factor} larger than available brokers: {len(brokers)}.")
    ids = sorted(brokers)
    n = len(ids)
    if start_index is None:
        start_index, next_shift = rng.randrange(n), rng.randrange(n)
    else:
        next_shift = start_index
    out = []
    for p in range(start_partition_id, start_partition_id + partitions):
        if p > 0 and p % n == 0:
            next_shift += 1
        first = (p + start_index) % n
        replicas = [ids[first]]
        for j in range(replication_factor - 1):
            replicas.append(ids[_replica_index(first, next_shift, j, n)])
        out.append(replicas)
    return out


def check_replica_assignment(assignment: list[list[int]], brokers: Iterable[int]) -> list[list[int]]:
    """A replica assignment given by hand (kafka-topics --replica-assignment), checked as AdminZkClient's
    validateReplicaAssignment does: a non-empty list of known brokers per partition, no broker twice in one,
    every partition the same number of replicas. Returns a copy; InvalidReplicaAssignmentError otherwise
    (an unknown broker is BROKER_NOT_AVAILABLE, the name the lab has always given it)."""
    if not assignment or any(not replicas for replicas in assignment):
        raise InvalidReplicaAssignmentError("replica_assignment needs a non-empty broker list per partition")
    if len({len(r) for r in assignment}) != 1:
        raise InvalidReplicaAssignmentError("Partition replica lists may not contain different numbers of replicas")
    known = set(brokers)
    for replicas in assignment:
        if len(set(replicas)) != len(replicas):
            raise InvalidReplicaAssignmentError(f"Duplicate brokers in replica assignment {replicas}")
        unknown = [b for b in replicas if b not in known]
        if unknown:
            raise InvalidReplicaAssignmentError(f"Unknown broker(s) {unknown} in replica assignment",
                                                error=Errors.BROKER_NOT_AVAILABLE)
    return [list(r) for r in assignment]


def _replica_index(first: int, second_shift: int, j: int, n: int) -> int:
    shift = 1 + (second_shift + j) % (n - 1)
    return (first + shift) % n
