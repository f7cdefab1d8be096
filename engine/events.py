"""Every state change in a cluster, as a typed, JSON-serialisable event.

The browser draws from these alone, so each carries enough to draw: which broker, which
partition, offsets before and after, who sent a message to whom and when it arrives. Events get
a sequence number (`seq`) and the virtual time (`time_ms`) from the cluster's event bus.
Keys and values are carried as text (UTF-8, undecodable bytes replaced) — they are for display.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any, Callable, ClassVar


def text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="replace")


@dataclass(kw_only=True)
class Event:
    kind: ClassVar[str] = "event"
    seq: int = -1
    time_ms: int = 0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["kind"] = self.kind
        return data


# -- brokers, controller, topics -----------------------------------------------------------
@dataclass(kw_only=True)
class BrokerStarted(Event):
    kind: ClassVar[str] = "broker_started"
    broker: int
    restarted: bool = False
    recovered_partitions: list[dict] = field(default_factory=list)  # per partition: LogRecovered fields


@dataclass(kw_only=True)
class BrokerCrashed(Event):
    kind: ClassVar[str] = "broker_crashed"
    broker: int
    mode: str  # "process": written data survives; "power": data after the recovery point is lost


@dataclass(kw_only=True)
class BrokerSessionExpired(Event):
    kind: ClassVar[str] = "broker_session_expired"
    broker: int


@dataclass(kw_only=True)
class ControllerElected(Event):
    kind: ClassVar[str] = "controller_elected"
    broker: int
    controller_epoch: int


@dataclass(kw_only=True)
class TopicCreated(Event):
    kind: ClassVar[str] = "topic_created"
    topic: str
    partitions: int
    replication_factor: int
    assignment: list[list[int]]
    config: dict
    warnings: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class PartitionsAdded(Event):
    kind: ClassVar[str] = "partitions_added"
    topic: str
    partitions: int             # the new total
    added: list[list[int]]      # replica lists of the new partitions, in partition order


@dataclass(kw_only=True)
class LeaderElected(Event):
    kind: ClassVar[str] = "leader_elected"
    topic: str
    partition: int
    leader: int
    leader_epoch: int
    isr: list[int]
    reason: str          # "new topic", "leader failed", "unclean", "partition back online"
    previous_leader: int = -1
    unclean: bool = False


@dataclass(kw_only=True)
class PartitionOffline(Event):
    kind: ClassVar[str] = "partition_offline"
    topic: str
    partition: int
    leader_epoch: int
    isr: list[int]
    reason: str


@dataclass(kw_only=True)
class LeaderAndIsrApplied(Event):
    kind: ClassVar[str] = "leader_and_isr_applied"
    broker: int
    topic: str
    partition: int
    role: str            # "leader" or "follower"
    leader: int
    leader_epoch: int
    isr: list[int]


# -- the log -------------------------------------------------------------------------------
@dataclass(kw_only=True)
class RecordsAppended(Event):
    kind: ClassVar[str] = "records_appended"
    broker: int
    topic: str
    partition: int
    role: str            # "leader" (from a producer) or "follower" (copied from the leader)
    base_offset: int
    last_offset: int
    leader_epoch: int
    log_end_offset: int
    records_count: int
    records: list[dict]  # {"offset", "key", "value"}; empty for appends of more than 20 records


@dataclass(kw_only=True)
class HighWatermarkAdvanced(Event):
    kind: ClassVar[str] = "high_watermark_advanced"
    broker: int
    topic: str
    partition: int
    old: int
    new: int
    role: str


@dataclass(kw_only=True)
class LogTruncated(Event):
    kind: ClassVar[str] = "log_truncated"
    broker: int
    topic: str
    partition: int
    from_offset: int
    to_offset: int
    records_removed: int
    removed: list[dict]  # what was lost: {"offset", "key", "value"}
    reason: str          # "high-watermark", "leader-epoch", "log recovery"


@dataclass(kw_only=True)
class SegmentRolled(Event):
    kind: ClassVar[str] = "segment_rolled"
    broker: int
    topic: str
    partition: int
    base_offset: int
    previous_base_offset: int
    reason: str


@dataclass(kw_only=True)
class SegmentDeleted(Event):
    kind: ClassVar[str] = "segment_deleted"
    broker: int
    topic: str
    partition: int
    base_offset: int
    next_offset: int
    size_in_bytes: int
    reason: str


@dataclass(kw_only=True)
class LogStartOffsetMoved(Event):
    kind: ClassVar[str] = "log_start_offset_moved"
    broker: int
    topic: str
    partition: int
    log_start_offset: int
    reason: str


@dataclass(kw_only=True)
class CheckpointWritten(Event):
    kind: ClassVar[str] = "checkpoint_written"
    broker: int
    file: str            # replication-offset-checkpoint, recovery-point-offset-checkpoint, ...
    entries: dict        # "topic-partition" -> offset


# -- replication ---------------------------------------------------------------------------
@dataclass(kw_only=True)
class IsrShrunk(Event):
    kind: ClassVar[str] = "isr_shrunk"
    topic: str
    partition: int
    leader: int
    removed: list[int]
    isr: list[int]
    reason: str


@dataclass(kw_only=True)
class IsrExpanded(Event):
    kind: ClassVar[str] = "isr_expanded"
    topic: str
    partition: int
    leader: int
    added: list[int]
    isr: list[int]


@dataclass(kw_only=True)
class MessageSent(Event):
    """A request or response put on the wire: drawn as a dot travelling from `src` to `dst`."""
    kind: ClassVar[str] = "message_sent"
    message_id: int
    api: str             # Fetch, FetchResponse, Produce, ProduceResponse, LeaderAndIsr, ...
    src: str             # "broker-1", "client"
    dst: str
    send_ms: int
    arrive_ms: int       # when it will arrive (-1: it will be lost)
    summary: dict


@dataclass(kw_only=True)
class MessageDropped(Event):
    kind: ClassVar[str] = "message_dropped"
    message_id: int
    api: str
    src: str
    dst: str
    reason: str          # "loss", "link cut", "destination down"


@dataclass(kw_only=True)
class ProduceAcknowledged(Event):
    kind: ClassVar[str] = "produce_acknowledged"
    request_id: int
    topic: str
    partition: int
    offset: int          # first offset of the records (-1 for acks=0: no answer comes back)
    acks: int


@dataclass(kw_only=True)
class ProduceFailed(Event):
    kind: ClassVar[str] = "produce_failed"
    request_id: int
    topic: str
    partition: int
    error: str           # Kafka's error name: NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT, ...
    acks: int


@dataclass(kw_only=True)
class FaultInjected(Event):
    kind: ClassVar[str] = "fault_injected"
    fault: str           # pause_fetcher, resume_fetcher, partition_network, heal_network, slow_broker
    brokers: list[int]
    detail: str = ""


class EventBus:
    """Numbers events in order and hands them to subscribers; keeps them for `step()`."""

    def __init__(self, clock: Callable[[], int]) -> None:
        self._clock = clock
        self._subscribers: list[Callable[[Event], None]] = []
        self.count = 0
        self._pending: list[Event] = []

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def publish(self, event: Event) -> Event:
        event.seq = self.count
        event.time_ms = self._clock()
        self.count += 1
        self._pending.append(event)
        for callback in list(self._subscribers):
            callback(event)
        return event

    def drain(self) -> list[Event]:
        out, self._pending = self._pending, []
        return out


EVENT_TYPES: dict[str, type[Event]] = {
    cls.kind: cls for cls in [
        BrokerStarted, BrokerCrashed, BrokerSessionExpired, ControllerElected, TopicCreated, PartitionsAdded,
        LeaderElected, PartitionOffline, LeaderAndIsrApplied, RecordsAppended, HighWatermarkAdvanced,
        LogTruncated, SegmentRolled, SegmentDeleted, LogStartOffsetMoved, CheckpointWritten,
        IsrShrunk, IsrExpanded, MessageSent, MessageDropped, ProduceAcknowledged, ProduceFailed,
        FaultInjected]
}


def event_fields(kind: str) -> list[str]:
    return [f.name for f in fields(EVENT_TYPES[kind])]
