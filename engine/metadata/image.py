"""A node's picture of the cluster in KRaft mode: the `__cluster_metadata` records, replayed.

Kafka's MetadataImage/MetadataDelta (metadata/src/main/java/org/apache/kafka/image/): every
controller and every broker replays the committed metadata records in offset order into an image
of its own. The active controller also replays the records it has just written, before they
commit (QuorumController replays on append; a controller that loses leadership drops those and
rebuilds from what committed). Nothing here is shared between nodes: two brokers' images differ
exactly by the records one of them has not fetched yet, which the lab shows as each broker's
metadata offset.

`MetadataImage` answers as a `MetadataReader` (engine/metadata/view.py), so the code that reads
ZooKeeper's znodes in ZooKeeper mode reads this in KRaft mode. Its `take_delta()` says which
topics and partitions changed since it was last asked (MetadataDelta): the broker acts on those
(ReplicaManager.applyDelta), the controller on none.

Record fields follow Kafka's schemas (engine/metadata/records.py). A partition's `leader` of -1
is NO_LEADER; a PartitionChangeRecord's -2 (NO_LEADER_CHANGE) and None lists leave a field as it is.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engine.metadata import records as mr
from engine.metadata.zk import NOT_LOG_CONFIGS, TopicInfo

TOPIC_RESOURCE = 2        # ConfigResource.Type.TOPIC
BROKER_RESOURCE = 4       # ConfigResource.Type.BROKER
NO_LEADER = -1
NO_LEADER_CHANGE = -2     # PartitionChangeRecord: the leader stays (LeaderConstants.NO_LEADER_CHANGE)
FENCE, NO_FENCING_CHANGE, UNFENCE = 1, 0, -1   # BrokerRegistrationFencingChange


@dataclass
class PartitionRegistration:
    """One partition as the metadata log says (Kafka's PartitionRegistration)."""
    replicas: list[int]
    isr: list[int]
    leader: int
    leader_epoch: int
    partition_epoch: int
    removing_replicas: list[int] = field(default_factory=list)
    adding_replicas: list[int] = field(default_factory=list)
    eligible_leader_replicas: list[int] = field(default_factory=list)
    last_known_elr: list[int] = field(default_factory=list)

    def as_state(self) -> dict:
        """The fields of ZooKeeper's partition state node, plus KRaft's own."""
        return {"leader": self.leader, "leader_epoch": self.leader_epoch, "isr": list(self.isr),
                "replicas": list(self.replicas), "partition_epoch": self.partition_epoch,
                "adding_replicas": list(self.adding_replicas), "removing_replicas": list(self.removing_replicas),
                "eligible_leader_replicas": list(self.eligible_leader_replicas)}


@dataclass
class TopicImage:
    name: str
    topic_id: str                                  # URL-safe base64, as zk.TopicInfo's
    partitions: dict[int, PartitionRegistration] = field(default_factory=dict)


@dataclass
class BrokerRegistration:
    """A registered broker (Kafka's BrokerRegistration): its epoch is the offset of its registration."""
    id: int
    epoch: int
    incarnation_id: str
    rack: str | None
    fenced: bool
    in_controlled_shutdown: bool = False
    host: str = ""


@dataclass
class MetadataDelta:
    """What changed since the last take_delta() (Kafka's MetadataDelta, much reduced)."""
    changed_partitions: set[tuple[str, int]] = field(default_factory=set)
    deleted_topics: dict[str, list[list[int]]] = field(default_factory=dict)   # name -> its partitions' replicas
    changed_brokers: set[int] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.changed_partitions or self.deleted_topics or self.changed_brokers)


class MetadataImage:
    def __init__(self) -> None:
        self.topics: dict[str, TopicImage] = {}        # in creation order
        self.topic_names_by_id: dict[str, str] = {}
        self.configs: dict[str, dict[str, str]] = {}    # topic -> its config (ConfigRecords)
        self.brokers: dict[int, BrokerRegistration] = {}
        self.features: dict[str, int] = {}
        self.next_producer_id = 0                       # ProducerIdsRecord
        self.offset = -1                                # the last record replayed
        self.changes = 0                                # records replayed (the reader's version)
        self.leader = (-1, 0)                           # the Raft leader and epoch, set by the owner
        self._delta = MetadataDelta()

    # -- replay ------------------------------------------------------------------------------
    def replay(self, record: object, offset: int) -> None:
        """Apply one committed (or, on the active controller, just written) record."""
        self.offset = offset
        self.changes += 1
        if isinstance(record, mr.TopicRecord):
            topic_id = record.topic_id
            self.topics[record.name] = TopicImage(record.name, topic_id)
            self.topic_names_by_id[topic_id] = record.name
            self.configs.setdefault(record.name, {})
        elif isinstance(record, mr.PartitionRecord):
            name = self.topic_names_by_id[record.topic_id]
            self.topics[name].partitions[record.partition_id] = PartitionRegistration(
                list(record.replicas), list(record.isr), record.leader, record.leader_epoch, record.partition_epoch,
                list(record.removing_replicas), list(record.adding_replicas),
                list(record.eligible_leader_replicas or []), list(record.last_known_elr or []))
            self._delta.changed_partitions.add((name, record.partition_id))
        elif isinstance(record, mr.PartitionChangeRecord):
            name = self.topic_names_by_id[record.topic_id]
            self._apply_change(self.topics[name].partitions[record.partition_id], record)
            self._delta.changed_partitions.add((name, record.partition_id))
        elif isinstance(record, mr.ConfigRecord):
            if record.resource_type == TOPIC_RESOURCE:
                config = self.configs.setdefault(record.resource_name, {})
                if record.value is None:
                    config.pop(record.name, None)
                else:
                    config[record.name] = record.value
        elif isinstance(record, mr.RemoveTopicRecord):
            name = self.topic_names_by_id.pop(record.topic_id)
            gone = self.topics.pop(name)
            self.configs.pop(name, None)
            self._delta.deleted_topics[name] = [list(p.replicas) for _, p in sorted(gone.partitions.items())]
            self._delta.changed_partitions -= {(name, p) for p in gone.partitions}
        elif isinstance(record, mr.RegisterBrokerRecord):
            host = next((e.host for e in record.end_points), "") if record.end_points else ""
            self.brokers[record.broker_id] = BrokerRegistration(
                record.broker_id, record.broker_epoch, record.incarnation_id, record.rack,
                bool(record.fenced), bool(record.in_controlled_shutdown), host)
            self._delta.changed_brokers.add(record.broker_id)
        elif isinstance(record, mr.UnregisterBrokerRecord):
            self.brokers.pop(record.broker_id, None)
            self._delta.changed_brokers.add(record.broker_id)
        elif isinstance(record, (mr.FenceBrokerRecord, mr.UnfenceBrokerRecord)):
            broker = self.brokers.get(record.id)
            if broker is not None:
                broker.fenced = isinstance(record, mr.FenceBrokerRecord)
                self._delta.changed_brokers.add(record.id)
        elif isinstance(record, mr.BrokerRegistrationChangeRecord):
            broker = self.brokers.get(record.broker_id)
            if broker is not None:
                if record.fenced == FENCE:
                    broker.fenced = True
                elif record.fenced == UNFENCE:
                    broker.fenced = False
                if record.in_controlled_shutdown:
                    broker.in_controlled_shutdown = True
                self._delta.changed_brokers.add(record.broker_id)
        elif isinstance(record, mr.FeatureLevelRecord):
            self.features[record.name] = record.feature_level
        elif isinstance(record, mr.ProducerIdsRecord):
            self.next_producer_id = record.next_producer_id
        # NoOpRecord and others: nothing to apply

    @staticmethod
    def _apply_change(partition: PartitionRegistration, change: object) -> None:
        """PartitionRegistration.merge: a field left out (None, or NO_LEADER_CHANGE) stays; a new
        leader means a new leader epoch; every change is a new partition epoch."""
        if change.isr is not None:                     # type: ignore[attr-defined]
            partition.isr = list(change.isr)           # type: ignore[attr-defined]
        if change.replicas is not None:                # type: ignore[attr-defined]
            partition.replicas = list(change.replicas)  # type: ignore[attr-defined]
        if change.removing_replicas is not None:       # type: ignore[attr-defined]
            partition.removing_replicas = list(change.removing_replicas)  # type: ignore[attr-defined]
        if change.adding_replicas is not None:         # type: ignore[attr-defined]
            partition.adding_replicas = list(change.adding_replicas)  # type: ignore[attr-defined]
        elr = getattr(change, "eligible_leader_replicas", None)
        if elr is not None:
            partition.eligible_leader_replicas = list(elr)
        leader = change.leader                         # type: ignore[attr-defined]
        if leader != NO_LEADER_CHANGE:
            partition.leader = leader
            partition.leader_epoch += 1
        partition.partition_epoch += 1

    def take_delta(self) -> MetadataDelta:
        delta, self._delta = self._delta, MetadataDelta()
        return delta

    # -- reading (engine.metadata.view.MetadataReader) --------------------------------------------
    @property
    def version(self) -> int:
        return self.changes

    def topic_names(self) -> list[str]:
        return list(self.topics)

    def topic_exists(self, topic: str) -> bool:
        return topic in self.topics

    def read_topic(self, topic: str) -> TopicInfo | None:
        image = self.topics.get(topic)
        if image is None:
            return None
        first = image.partitions.get(0)
        return TopicInfo(topic, len(image.partitions), len(first.replicas) if first else 0,
                         dict(self.configs.get(topic, {})), image.topic_id)

    def partition_count(self, topic: str) -> int:
        image = self.topics.get(topic)
        return 0 if image is None else len(image.partitions)

    def assignment(self, topic: str) -> list[list[int]]:
        image = self.topics.get(topic)
        if image is None:
            return []
        return [list(image.partitions[p].replicas) for p in sorted(image.partitions)]

    def topic_config(self, topic: str) -> dict:
        return dict(self.configs.get(topic, {}))

    def log_config(self, topic: str) -> dict:
        return {k: v for k, v in self.topic_config(topic).items() if k not in NOT_LOG_CONFIGS}

    def partition(self, topic: str, partition: int) -> PartitionRegistration | None:
        image = self.topics.get(topic)
        return None if image is None else image.partitions.get(partition)

    def partition_state(self, topic: str, partition: int) -> dict | None:
        registration = self.partition(topic, partition)
        return None if registration is None else registration.as_state()

    def registrations(self) -> dict[int, int]:
        """Registered, unfenced brokers -> their broker epoch (KRaft's answer to "who is alive")."""
        return {b.id: b.epoch for b in sorted(self.brokers.values(), key=lambda b: b.id) if not b.fenced}

    def controller_id(self) -> int:
        return self.leader[0]

    def controller_epoch(self) -> int:
        return self.leader[1]

    def broker_racks(self) -> dict[int, str]:
        """Unfenced brokers with a rack -> the rack their registration gave."""
        return {b.id: b.rack for b in sorted(self.brokers.values(), key=lambda b: b.id) if not b.fenced and b.rack}

    def topic_id_of(self, topic: str) -> str:
        return self.topics[topic].topic_id
