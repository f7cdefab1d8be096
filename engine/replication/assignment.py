"""Where a new topic's replicas go, as Kafka's ZooKeeper-era AdminUtils.assignReplicasToBrokers does it.

Rack-unaware (no broker has a `broker.rack`): brokers sorted by id; a random start index picks each
partition's first replica round robin; the other replicas follow the first at a shift that also
starts random and grows by one each time the partitions wrap around the brokers — so replicas
spread evenly and followers do not always sit on the same neighbour
(AdminUtils.assignReplicasToBrokersRackUnaware). Any partition count works: with 5 partitions on 3
brokers some brokers lead two, one leads one.

Rack-aware (every broker has a rack): the same round robin over a rack-alternated broker list (one
broker of each rack in turn, racks in name order), each further replica taken from the next broker
whose rack — and which broker — holds none of the partition's replicas yet, until every rack (then
every broker) has one (AdminUtils.assignReplicasToBrokersRackAware): each partition's replicas cover
min(replication factor, racks) racks. Some brokers with a rack and some without is refused, as
AdminZkClient.getBrokerMetadatas does in RackAwareMode.Enforced (the mode topic creation uses).
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


class RackInformationError(KafkaError, ValueError):
    """Some brokers have a rack and some do not (Kafka's AdminOperationException, which CreateTopics
    answers as UNKNOWN_SERVER_ERROR)."""
    error = Errors.UNKNOWN_SERVER_ERROR


def assign_replicas(brokers: list[int], partitions: int, replication_factor: int,
                    rng: random.Random, *, start_index: int | None = None,
                    start_partition_id: int = 0, racks: dict[int, str] | None = None) -> list[list[int]]:
    """Replica lists for `partitions` new partitions numbered from `start_partition_id`.

    `start_index` fixes the first broker (and the first shift) as Kafka does when partitions are
    added to an existing topic; by default both are random. `racks`: broker id -> rack of the brokers
    that have one (`broker.rack`); rack-aware placement when they all do, rack-unaware when none does."""
    with_rack = [b for b in brokers if (racks or {}).get(b)]
    if with_rack and len(with_rack) < len(brokers):
        raise RackInformationError(
            "Not all brokers have rack information for replica rack aware assignment (brokers without a "
            f"broker.rack: {sorted(set(brokers) - set(with_rack))})")
    if with_rack:
        assert racks is not None
        return _assign_rack_aware(brokers, partitions, replication_factor, rng, racks, start_index,
                                  start_partition_id)
    _check_counts(len(brokers), partitions, replication_factor)
    ids = sorted(brokers)
    n = len(ids)
    if start_index is None:
        start_index, next_shift = rng.randrange(n), rng.randrange(n)
    else:
        next_shift = start_index
    out = []
    first_id = max(0, start_partition_id)     # Kafka's -1 means "from partition 0"
    for p in range(first_id, first_id + partitions):
        if p > 0 and p % n == 0:
            next_shift += 1
        first = (p + start_index) % n
        replicas = [ids[first]]
        for j in range(replication_factor - 1):
            replicas.append(ids[_replica_index(first, next_shift, j, n)])
        out.append(replicas)
    return out


def _check_counts(brokers: int, partitions: int, replication_factor: int) -> None:
    if partitions <= 0:
        raise InvalidPartitionsError(f"Number of partitions must be larger than 0, got {partitions}.")
    if replication_factor <= 0:
        raise InvalidReplicationFactorError(
            f"Replication factor must be larger than 0, got {replication_factor}.")
    if replication_factor > brokers:
        raise InvalidReplicationFactorError(
            f"Replication factor: {replication_factor} larger than available brokers: {brokers}.")


def rack_alternated_broker_list(racks: dict[int, str]) -> list[int]:
    """AdminUtils.getRackAlternatedBrokerList: one broker of each rack in turn, racks in name order,
    each rack's brokers by id ({1: a, 2: a, 3: b, 4: c} gives 1, 3, 4, 2)."""
    by_rack: dict[str, list[int]] = {}
    for broker, rack in sorted(racks.items()):
        by_rack.setdefault(rack, []).append(broker)
    columns = [by_rack[rack] for rack in sorted(by_rack)]
    return [column[row] for row in range(max(map(len, columns))) for column in columns if row < len(column)]


def _assign_rack_aware(brokers: list[int], partitions: int, replication_factor: int, rng: random.Random,
                       racks: dict[int, str], start_index: int | None,
                       start_partition_id: int) -> list[list[int]]:
    """AdminUtils.assignReplicasToBrokersRackAware (same random draws as the rack-unaware one)."""
    _check_counts(len(brokers), partitions, replication_factor)
    rack_of = {b: racks[b] for b in brokers}
    arranged = rack_alternated_broker_list(rack_of)
    n, rack_count = len(arranged), len(set(rack_of.values()))
    if start_index is None:
        start_index, next_shift = rng.randrange(n), rng.randrange(n)
    else:
        next_shift = start_index
    out = []
    first_id = max(0, start_partition_id)
    for p in range(first_id, first_id + partitions):
        if p > 0 and p % n == 0:
            next_shift += 1
        first = (p + start_index) % n
        replicas = [arranged[first]]
        racks_used, brokers_used = {rack_of[arranged[first]]}, {arranged[first]}
        k = 0
        for _ in range(replication_factor - 1):
            while True:
                broker = arranged[_replica_index(first, next_shift * rack_count, k, n)]
                rack = rack_of[broker]
                k += 1
                # Skip a broker whose rack already has a replica while some rack has none, or a broker
                # that has one while some broker has none.
                if (rack not in racks_used or len(racks_used) == rack_count) and \
                        (broker not in brokers_used or len(brokers_used) == n):
                    replicas.append(broker)
                    racks_used.add(rack)
                    brokers_used.add(broker)
                    break
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


# -- KRaft: StripedReplicaPlacer ------------------------------------------------------------------------
class _BrokerList:
    """StripedReplicaPlacer.BrokerList: brokers handed out round robin from a random offset; each new
    iteration epoch starts one further along."""

    def __init__(self) -> None:
        self.brokers: list[int] = []
        self.index = 0
        self.offset = 0
        self.epoch = 0

    def initialize(self, rng: random.Random) -> None:
        if self.brokers:
            self.brokers.sort()
            self.offset = rng.randrange(len(self.brokers))

    def next(self, epoch: int) -> int:
        if not self.brokers:
            return -1
        if self.epoch != epoch:
            self.epoch, self.index = epoch, 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker


class _Rack:
    def __init__(self) -> None:
        self.fenced = _BrokerList()
        self.unfenced = _BrokerList()

    def next(self, epoch: int) -> int:
        broker = self.unfenced.next(epoch)
        return broker if broker >= 0 else self.fenced.next(epoch)


class StripedReplicaPlacer:
    """KRaft's placement (metadata/.../placement/StripedReplicaPlacer.java, its RackList): racks taken
    round robin from a random offset that moves one rack per partition — the "striped" pattern
    (A B C, B C A, C A B) — each rack's brokers round robin from a random offset too; a partition's
    first replica (its leader) only on an unfenced broker, fenced brokers only once a rack has no
    unfenced one left; after as many partitions as unfenced brokers the racks and brokers are shuffled
    so the same sets do not repeat. Brokers without a rack form one rack of their own (Kafka's
    Optional.empty(), sorted first). One placer places one topic's partitions (Kafka builds a RackList
    per place() call). Python's seeded `rng` stands for Java's Random: the same rules, other draws."""

    def __init__(self, rng: random.Random, brokers: list[int], racks: dict[int, str] | None = None,
                 fenced: Iterable[int] = ()) -> None:
        self.rng = rng
        fenced_ids = set(fenced)
        self.racks: dict[str | None, _Rack] = {}
        for broker in brokers:
            rack = self.racks.setdefault((racks or {}).get(broker) or None, _Rack())
            (rack.fenced if broker in fenced_ids else rack.unfenced).brokers.append(broker)
        # Kafka initialises the racks in its HashMap's order; here in rack-name order, so the draws are seeded.
        self.rack_names = sorted(self.racks, key=lambda name: (name is not None, name or ""))
        for name in self.rack_names:
            self.racks[name].fenced.initialize(rng)
            self.racks[name].unfenced.initialize(rng)
        self.total = len(brokers)
        self.unfenced = sum(len(r.unfenced.brokers) for r in self.racks.values())
        self.epoch = 0
        self.offset = rng.randrange(len(self.rack_names)) if self.rack_names else 0

    def place(self, partitions: int, replication_factor: int) -> list[list[int]]:
        """StripedReplicaPlacer.place: replica lists for `partitions` partitions."""
        self._check(replication_factor)
        if partitions <= 0:
            raise InvalidPartitionsError(f"Number of partitions must be larger than 0, got {partitions}.")
        return [self._place_one(replication_factor) for _ in range(partitions)]

    def _check(self, replication_factor: int) -> None:
        if replication_factor <= 0:
            raise InvalidReplicationFactorError(f"Invalid replication factor {replication_factor}: the "
                                                "replication factor must be positive.")
        if replication_factor > self.total:
            raise InvalidReplicationFactorError(
                f"The target replication factor of {replication_factor} cannot be reached because only "
                f"{self.total} broker(s) are registered.")
        if self.unfenced == 0:
            raise InvalidReplicationFactorError("All brokers are currently fenced.")

    def _place_one(self, replication_factor: int) -> list[int]:
        """RackList.place."""
        if self.epoch == self.unfenced and self.unfenced > 1:
            self._shuffle()
            self.epoch = 0
        if self.offset == len(self.rack_names):
            self.offset = 0
        names = self.rack_names
        first_rack = self.offset
        while True:
            broker = self.racks[names[first_rack]].unfenced.next(self.epoch)
            if broker >= 0:
                out = [broker]
                break
            first_rack = (first_rack + 1) % len(names)
        rack_index = self.offset
        for _ in range(replication_factor - 1):
            broker = -1
            while broker < 0:
                if rack_index == first_rack:
                    first_rack = -1     # the leader's rack gave its broker this round: skip it once
                else:
                    broker = self.racks[names[rack_index]].next(self.epoch)
                rack_index = (rack_index + 1) % len(names)
            out.append(broker)
        self.epoch += 1
        self.offset += 1
        return out

    def _shuffle(self) -> None:
        self.rng.shuffle(self.rack_names)
        for name in sorted(self.racks, key=lambda n: (n is not None, n or "")):
            self.rng.shuffle(self.racks[name].fenced.brokers)
            self.rng.shuffle(self.racks[name].unfenced.brokers)


def place_replicas_striped(brokers: list[int], partitions: int, replication_factor: int, rng: random.Random,
                           *, racks: dict[int, str] | None = None, fenced: Iterable[int] = ()) -> list[list[int]]:
    """A KRaft controller's replica lists for a new topic (StripedReplicaPlacer over its usable brokers)."""
    return StripedReplicaPlacer(rng, brokers, racks, fenced).place(partitions, replication_factor)
