"""What a consumer knows, shared by its parts: its configuration, its subscription and positions
(Kafka's SubscriptionState), its view of the cluster (ConsumerMetadata), and its errors.

Invariants kept here:
- a consumer is either subscribed (to topics, or to a pattern) or has partitions assigned by
  hand, never both;
- a position is the offset of the next record the application will see; it is None until the
  committed offset (or auto.offset.reset) provides one, and it only moves when poll() hands
  records out or the application seeks;
- the assignment keeps the order partitions were assigned in; each partition has one state.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any

from engine.common.config_values import field_kind, parse_config_value
from engine.common.errors import Errors, KafkaError
from engine.groups.assignors import ASSIGNORS, TopicPartition
from engine.storage.errors import InvalidConfigError

if TYPE_CHECKING:
    from engine.topic_pattern import TopicPattern

INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})
RESET_STRATEGIES = ("earliest", "latest", "none")
# Java class names a config may use instead of the protocol names.
ASSIGNOR_CLASSES = {
    "org.apache.kafka.clients.consumer.RangeAssignor": "range",
    "org.apache.kafka.clients.consumer.RoundRobinAssignor": "roundrobin",
    "org.apache.kafka.clients.consumer.StickyAssignor": "sticky",
    "org.apache.kafka.clients.consumer.CooperativeStickyAssignor": "cooperative-sticky",
}


# -- errors ------------------------------------------------------------------------------------
class KafkaClientError(KafkaError):
    """An error the application sees; `kafka_name` is Kafka's error (or exception) name."""
    error = Errors.UNKNOWN_SERVER_ERROR

    def __init__(self, message: str, kafka_name: str | None = None) -> None:
        super().__init__(message, error=kafka_name)


class CommitFailedError(KafkaClientError):
    """The group moved on: this member is not in the generation it committed for (CommitFailedException)."""
    error = Errors.COMMIT_FAILED


class RebalanceInProgressError(KafkaClientError):
    error = Errors.REBALANCE_IN_PROGRESS


class NoOffsetForPartitionError(KafkaClientError):
    """auto.offset.reset=none and nothing committed (NoOffsetForPartitionException)."""
    error = Errors.NO_OFFSET_FOR_PARTITION


class IllegalStateError(KafkaClientError):
    error = Errors.ILLEGAL_STATE


class ConsumerTimeoutError(KafkaClientError):
    error = Errors.TIMEOUT


RETRIABLE_ERRORS = frozenset({Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR,
                              Errors.COORDINATOR_LOAD_IN_PROGRESS, Errors.REQUEST_TIMED_OUT,
                              Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.NOT_LEADER_OR_FOLLOWER})


# -- configuration -----------------------------------------------------------------------------
@dataclass(frozen=True)
class ConsumerConfig:
    """Consumer settings under Kafka's names (dots turned into underscores), Kafka's defaults."""
    group_id: str | None = None
    client_id: str = ""
    max_poll_records: int = 500
    fetch_min_bytes: int = 1
    fetch_max_wait_ms: int = 500
    fetch_max_bytes: int = 52428800
    max_partition_fetch_bytes: int = 1048576
    auto_offset_reset: str = "latest"
    enable_auto_commit: bool = True
    auto_commit_interval_ms: int = 5000
    session_timeout_ms: int = 45000
    heartbeat_interval_ms: int = 3000
    max_poll_interval_ms: int = 300000
    partition_assignment_strategy: tuple[str, ...] = ("range", "cooperative-sticky")
    request_timeout_ms: int = 30000
    default_api_timeout_ms: int = 60000
    retry_backoff_ms: int = 100
    retry_backoff_max_ms: int = 1000
    metadata_max_age_ms: int = 300000
    isolation_level: str = "read_uncommitted"
    exclude_internal_topics: bool = True
    # The consumer's rack (KIP-392): sent with its fetches so a leader with a replica.selector.class
    # may send it to a replica in its rack. "" (Kafka's default): the lab's consumer then sends no
    # client metadata at all, and reads from leaders only, as before.
    client_rack: str = ""

    @classmethod
    def from_dict(cls, config: dict[str, Any], default_client_id: str = "") -> ConsumerConfig:
        known = {f.name: f for f in fields(cls)}
        values: dict[str, Any] = {}
        for key, raw in (config or {}).items():
            name = key.replace(".", "_")
            if name not in known:
                raise InvalidConfigError(f"Unknown consumer config '{key}'")
            values[name] = _parse(key, raw, known[name].type)
        values.setdefault("client_id", default_client_id)
        made = cls(**values)
        made.validate()
        return made

    def validate(self) -> None:
        if self.auto_offset_reset not in RESET_STRATEGIES:
            raise InvalidConfigError(f"auto.offset.reset must be one of {', '.join(RESET_STRATEGIES)}, "
                                     f"not {self.auto_offset_reset!r}")
        unknown = [a for a in self.partition_assignment_strategy if a not in ASSIGNORS]
        if unknown or not self.partition_assignment_strategy:
            raise InvalidConfigError(f"partition.assignment.strategy: unknown assignor(s) {unknown} "
                                     f"(known: {', '.join(sorted(ASSIGNORS))})")
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise InvalidConfigError("heartbeat.interval.ms must be lower than session.timeout.ms")
        if self.isolation_level not in ("read_uncommitted", "read_committed"):
            raise InvalidConfigError("isolation.level must be read_uncommitted or read_committed")
        if self.max_poll_records < 1:
            raise InvalidConfigError("max.poll.records must be at least 1")


def _parse(key: str, raw: Any, type_name: Any) -> Any:
    type_name = str(type_name)
    if type_name.startswith("tuple"):
        items = raw.split(",") if isinstance(raw, str) else list(raw)
        return tuple(ASSIGNOR_CLASSES.get(str(i).strip(), str(i).strip()) for i in items if str(i).strip())
    return parse_config_value(key, raw, field_kind(type_name), InvalidConfigError)


# -- records -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class ConsumedRecord:
    """One record as poll() returns it (ConsumerRecord)."""
    topic: str
    partition: int
    offset: int
    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: tuple = ()
    leader_epoch: int = -1

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    def to_dict(self) -> dict:
        return {"topic": self.topic, "partition": self.partition, "offset": self.offset,
                "key": _text(self.key), "value": _text(self.value)}


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="replace")


def as_dicts(records: list[ConsumedRecord]) -> list[dict]:
    """`[r.to_dict() for r in records]` in one comprehension: a poll's RecordsConsumed event holds
    every record it hands out, and the call per record cost a third of consuming one."""
    return [{"topic": r.topic, "partition": r.partition, "offset": r.offset,
             "key": None if (key := r.key) is None else key.decode("utf-8", errors="replace"),
             "value": None if (value := r.value) is None else value.decode("utf-8", errors="replace")}
            for r in records]


def as_topic_partition(tp: TopicPartition | tuple | str) -> TopicPartition:
    """TopicPartition from a TopicPartition, a (topic, partition) pair or a "topic-partition" string."""
    if isinstance(tp, TopicPartition):
        return tp
    if isinstance(tp, str):
        topic, _, partition = tp.rpartition("-")
        return TopicPartition(topic, int(partition))
    topic, partition = tp
    return TopicPartition(topic, int(partition))


# -- subscription and positions ----------------------------------------------------------------
@dataclass
class PartitionState:
    position: int | None = None
    position_epoch: int = -1          # leader epoch of the last record handed out (for commits)
    reset_strategy: str | None = None  # "earliest" / "latest" while an offset reset is pending
    paused: bool = False
    high_watermark: int = -1          # as the last fetch answer said (for the lag)
    # The replica a leader told this consumer to fetch from (KIP-392) and until when (virtual ms) it
    # holds: now + metadata.max.age.ms when set (SubscriptionState.TopicPartitionState). None: the leader.
    preferred_read_replica: int | None = None
    preferred_read_replica_expire_ms: int | None = None


@dataclass
class SubscriptionState:
    mode: str | None = None           # None, "topics", "pattern", "assigned"
    topics: list[str] = field(default_factory=list)   # subscribed topics (for a pattern: those matching)
    pattern: re.Pattern | TopicPattern | None = None
    listener: Any = None
    assignment: dict[TopicPartition, PartitionState] = field(default_factory=dict)

    @property
    def auto_assigned(self) -> bool:
        return self.mode in ("topics", "pattern")

    def assign(self, partitions: list[TopicPartition]) -> None:
        """Make `partitions` the assignment; partitions kept keep their positions."""
        self.assignment = {tp: self.assignment.get(tp) or PartitionState() for tp in partitions}

    def matches_pattern(self, topic: str, exclude_internal: bool = True) -> bool:
        if self.pattern is None or (exclude_internal and topic in INTERNAL_TOPICS):
            return False
        return bool(self.pattern.fullmatch(topic))   # a TopicPattern says True/False, a re.Pattern a match or None

    def consumed_offsets(self) -> dict[TopicPartition, tuple[int, int]]:
        """(position, leader epoch) of every assigned partition that has a position: what a
        commit without arguments commits."""
        return {tp: (s.position, s.position_epoch) for tp, s in self.assignment.items() if s.position is not None}


@dataclass
class ConsumerMetadata:
    """The consumer's view of the cluster, from its last Metadata answer."""
    brokers: list[int] = field(default_factory=list)
    partitions: dict[str, list] = field(default_factory=dict)   # topic -> [PartitionMetadata]
    last_refresh_ms: int | None = None
    need_update: bool = True
    in_flight: bool = False
    next_attempt_ms: int = 0
    version: int = 0

    def partition_count(self, topic: str) -> int | None:
        parts = self.partitions.get(topic)
        return len(parts) if parts is not None else None

    def leader(self, tp: TopicPartition) -> tuple[int, int]:
        """(leader broker or -1, leader epoch) of a partition, as last heard."""
        parts = self.partitions.get(tp.topic) or []
        if tp.partition >= len(parts):
            return -1, -1
        p = parts[tp.partition]
        return p.leader, p.leader_epoch
