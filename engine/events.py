"""Every state change in a cluster, as a typed, JSON-serialisable event.

The browser draws from these alone, so each carries enough to draw: which broker, which
partition, offsets before and after, who sent a message to whom and when it arrives. Events get
a sequence number (`seq`), the virtual time (`time_ms`) and the scheduler step (`step`: the
number of actions run so far, so an action's events and the commands applied right after it
share a step) from the cluster's event bus.
Keys and values are carried as text (UTF-8, undecodable bytes replaced) — they are for display.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar


def text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", errors="replace")


@dataclass(kw_only=True)
class Event:
    kind: ClassVar[str] = "event"
    seq: int = -1
    time_ms: int = 0
    step: int = -1

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


# -- topic deletion, reassignment (the controller's; the broker's side of a deleted replica) ----
@dataclass(kw_only=True)
class TopicDeletionStarted(Event):
    """The controller took up a topic marked for deletion (TopicDeletionManager.onTopicDeletion)."""
    kind: ClassVar[str] = "topic_deletion_started"
    topic: str
    partitions: int
    replicas: list[int]             # the brokers holding a replica: each gets StopReplica (delete)
    ineligible: list[int]           # those down: the deletion waits until they are back


@dataclass(kw_only=True)
class TopicDeleted(Event):
    """Every replica deleted: the topic's znodes are gone (TopicDeletionManager.completeDeleteTopic)."""
    kind: ClassVar[str] = "topic_deleted"
    topic: str
    partitions: int


@dataclass(kw_only=True)
class ReplicaDeleted(Event):
    """A broker stopped a replica and deleted its log: the directory renamed `<t>-<p>.<uuid>-delete`,
    removed `removed_after_ms` later (LogManager.asyncDelete)."""
    kind: ClassVar[str] = "replica_deleted"
    broker: int
    topic: str
    partition: int
    directory: str
    removed_after_ms: int


@dataclass(kw_only=True)
class DeletedLogRemoved(Event):
    """A deleted replica's `-delete` directory left the disk."""
    kind: ClassVar[str] = "deleted_log_removed"
    broker: int
    topic: str
    partition: int
    directory: str


@dataclass(kw_only=True)
class ReassignmentStarted(Event):
    """A partition's move began (KIP-455, phase U): RS = ORS + TRS, AR = TRS - ORS, RR = ORS - TRS."""
    kind: ClassVar[str] = "reassignment_started"
    topic: str
    partition: int
    original: list[int]             # ORS
    target: list[int]               # TRS
    replicas: list[int]             # RS while it moves
    adding: list[int]               # AR
    removing: list[int]             # RR


@dataclass(kw_only=True)
class ReassignmentStep(Event):
    """One of KafkaController.onPartitionReassignment's steps: `phase` "A1-A2", "B3", "B4-B5"."""
    kind: ClassVar[str] = "reassignment_step"
    topic: str
    partition: int
    phase: str
    description: str
    replicas: list[int]
    leader: int
    isr: list[int]


@dataclass(kw_only=True)
class ReassignmentCompleted(Event):
    kind: ClassVar[str] = "reassignment_completed"
    topic: str
    partition: int
    replicas: list[int]
    leader: int
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
class LogCleaned(Event):
    """The log cleaner compacted a replica's log (engine/storage/cleaner.py, Kafka's LogCleaner)."""
    kind: ClassVar[str] = "log_cleaned"
    broker: int
    topic: str
    partition: int
    first_dirty_offset: int         # where the dirty section began (the cleaner checkpoint before)
    end_offset: int                 # the first offset not cleaned (the checkpoint now)
    dirty_ratio: float              # cleanable / (clean + cleanable) bytes when it was chosen
    forced_by_max_lag: bool         # chosen for max.compaction.lag.ms, not for its ratio
    segments_cleaned: int           # segments rewritten...
    segments_after: int             # ...into this many
    records_before: int
    records_after: int
    bytes_before: int
    bytes_after: int
    tombstones_removed: int
    delete_horizons_set: int        # batches whose tombstones got a delete horizon (KIP-534)
    segments: list[list[int]] = field(default_factory=list)    # [base offset, size] of the cleaned segments


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


# -- the producer client and idempotence ----------------------------------------------------
@dataclass(kw_only=True)
class ProducerCreated(Event):
    kind: ClassVar[str] = "producer_created"
    producer: str        # the client node, "producer-<name>"
    config: dict         # the resolved settings, under Kafka's names
    warnings: list[str] = field(default_factory=list)  # e.g. idempotence silently turned off


@dataclass(kw_only=True)
class ProducerBatchSent(Event):
    """A batch leaves the producer's accumulator in a Produce request (again, for a retry)."""
    kind: ClassVar[str] = "producer_batch_sent"
    producer: str
    broker: int
    topic: str
    partition: int
    records_count: int
    size_in_bytes: int
    attempt: int         # 1 for the first send
    producer_id: int     # -1, -1, -1 without idempotence
    producer_epoch: int
    base_sequence: int
    records: list[dict]  # {"key", "value"}; empty for batches of more than 20 records


@dataclass(kw_only=True)
class ProducerBatchRetried(Event):
    kind: ClassVar[str] = "producer_batch_retried"
    producer: str
    topic: str
    partition: int
    error: str           # why the attempt failed: NOT_LEADER_OR_FOLLOWER, NETWORK_EXCEPTION, ...
    attempt: int         # the attempt that failed
    backoff_ms: int
    base_sequence: int
    records_count: int


@dataclass(kw_only=True)
class ProducerBatchAcknowledged(Event):
    kind: ClassVar[str] = "producer_batch_acknowledged"
    producer: str
    topic: str
    partition: int
    base_offset: int     # -1 for acks=0
    records_count: int
    attempts: int
    base_sequence: int


@dataclass(kw_only=True)
class ProducerBatchFailed(Event):
    kind: ClassVar[str] = "producer_batch_failed"
    producer: str
    topic: str
    partition: int
    error: str
    message: str
    records_count: int
    attempts: int


@dataclass(kw_only=True)
class ProducerEpochBumped(Event):
    """An idempotent producer gave up on a sequence it cannot resolve and restarts at 0."""
    kind: ClassVar[str] = "producer_epoch_bumped"
    producer: str
    producer_id: int
    producer_epoch: int  # the new epoch
    reason: str


@dataclass(kw_only=True)
class ProducerIdAllocated(Event):
    kind: ClassVar[str] = "producer_id_allocated"
    broker: int
    client: str
    producer_id: int
    producer_epoch: int


@dataclass(kw_only=True)
class DuplicateBatchIgnored(Event):
    """The leader recognised a retried batch it already wrote: nothing appended, old offsets returned."""
    kind: ClassVar[str] = "duplicate_batch_ignored"
    broker: int
    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    first_sequence: int
    last_sequence: int
    base_offset: int
    last_offset: int


@dataclass(kw_only=True)
class ProduceSequenceRejected(Event):
    kind: ClassVar[str] = "produce_sequence_rejected"
    broker: int
    topic: str
    partition: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    expected_sequence: int  # -1 when not one number (an old epoch)
    error: str              # OUT_OF_ORDER_SEQUENCE_NUMBER or INVALID_PRODUCER_EPOCH


class EventBus:
    """Numbers events in order and hands them to subscribers; keeps them for `step()`."""

    def __init__(self, clock: Callable[[], int], steps: Callable[[], int] = lambda: -1) -> None:
        self._clock = clock
        self._steps = steps
        self._subscribers: list[Callable[[Event], None]] = []
        self.count = 0
        self._pending: list[Event] = []

    def subscribe(self, callback: Callable[[Event], None]) -> Callable[[], None]:
        self._subscribers.append(callback)
        return lambda: self._subscribers.remove(callback)

    def publish(self, event: Event) -> Event:
        event.seq = self.count
        event.time_ms = self._clock()
        event.step = self._steps()
        self.count += 1
        self._pending.append(event)
        for callback in list(self._subscribers):
            callback(event)
        return event

    def drain(self) -> list[Event]:
        out, self._pending = self._pending, []
        return out


def _by_kind(classes: list[type[Event]]) -> dict[str, type[Event]]:
    return {cls.kind: cls for cls in classes}


EVENT_TYPES: dict[str, type[Event]] = _by_kind([
        BrokerStarted, BrokerCrashed, BrokerSessionExpired, ControllerElected, TopicCreated, PartitionsAdded,
        LeaderElected, PartitionOffline, LeaderAndIsrApplied, RecordsAppended, HighWatermarkAdvanced,
        LogTruncated, SegmentRolled, SegmentDeleted, LogCleaned, LogStartOffsetMoved, CheckpointWritten,
        IsrShrunk, IsrExpanded, MessageSent, MessageDropped, ProduceAcknowledged, ProduceFailed,
        FaultInjected, ProducerCreated, ProducerBatchSent, ProducerBatchRetried, ProducerBatchAcknowledged,
        ProducerBatchFailed, ProducerEpochBumped, ProducerIdAllocated, DuplicateBatchIgnored,
        ProduceSequenceRejected, TopicDeletionStarted, TopicDeleted, ReplicaDeleted, DeletedLogRemoved,
        ReassignmentStarted, ReassignmentStep, ReassignmentCompleted])


def event_fields(kind: str) -> list[str]:
    return [f.name for f in fields(EVENT_TYPES[kind])]


# -- consumer groups: the coordinator's side -----------------------------------------------------
# Partitions are written "topic-partition" ("t-0"), as kafka-consumer-groups prints them.
@dataclass(kw_only=True)
class GroupStateChanged(Event):
    kind: ClassVar[str] = "group_state_changed"
    group: str
    coordinator: int     # the broker whose coordinator holds the group
    state: str           # Empty, PreparingRebalance, CompletingRebalance, Stable, Dead
    previous_state: str
    generation: int
    protocol: str | None
    leader: str | None   # the leader's member id
    members: list[str]   # member ids
    reason: str = ""


@dataclass(kw_only=True)
class MemberJoined(Event):
    kind: ClassVar[str] = "member_joined"
    group: str
    coordinator: int
    member_id: str
    client_id: str
    protocols: list[str]  # the assignors it supports, in its order of preference
    rejoined: bool = False  # a member already in the group sent JoinGroup again (its JoinGroup now waits)


@dataclass(kw_only=True)
class MemberRemoved(Event):
    kind: ClassVar[str] = "member_removed"
    group: str
    coordinator: int
    member_id: str
    client_id: str
    reason: str          # "left the group: ...", "session timeout (45000 ms) expired", ...


@dataclass(kw_only=True)
class RebalanceStarted(Event):
    kind: ClassVar[str] = "rebalance_started"
    group: str
    coordinator: int
    generation: int      # the generation being replaced
    reason: str


@dataclass(kw_only=True)
class RebalanceCompleted(Event):
    kind: ClassVar[str] = "rebalance_completed"
    group: str
    coordinator: int
    generation: int
    leader: str
    protocol: str
    assignment: dict     # member id -> ["t-0", ...] (an empty list: that member got nothing)


@dataclass(kw_only=True)
class OffsetsCommitted(Event):
    kind: ClassVar[str] = "offsets_committed"
    group: str
    coordinator: int
    member_id: str
    generation: int
    offsets: dict        # "t-0" -> the committed offset (the next one to read)


@dataclass(kw_only=True)
class CoordinatorLoaded(Event):
    kind: ClassVar[str] = "coordinator_loaded"
    broker: int
    partition: int       # the __consumer_offsets partition it now leads
    groups: list[str]
    offsets: int         # committed offsets read back from the log
    records: int         # records replayed


@dataclass(kw_only=True)
class CoordinatorUnloaded(Event):
    kind: ClassVar[str] = "coordinator_unloaded"
    broker: int
    partition: int
    groups: list[str]


# -- consumer groups: the consumer's side ------------------------------------------------------
@dataclass(kw_only=True)
class CoordinatorDiscovered(Event):
    kind: ClassVar[str] = "coordinator_discovered"
    consumer: str
    group: str
    coordinator: int
    previous: int = -1


@dataclass(kw_only=True)
class AssignmentReceived(Event):
    kind: ClassVar[str] = "assignment_received"
    consumer: str
    group: str
    member_id: str
    generation: int
    protocol: str
    assignment: list[str]  # everything it owns now
    added: list[str]
    revoked: list[str]     # cooperative protocols revoke here, then rejoin
    idle: bool = False     # nothing assigned (more consumers than partitions)
    # What it owned before this rebalance (eager protocols gave it all up before rejoining, so
    # `added` is then everything it owns; `previous` says what it had).
    previous: list[str] = field(default_factory=list)


@dataclass(kw_only=True)
class PartitionsRevoked(Event):
    kind: ClassVar[str] = "partitions_revoked"
    consumer: str
    group: str
    partitions: list[str]
    lost: bool = False     # lost (kicked out of the group) rather than revoked in a rebalance
    reason: str = ""


@dataclass(kw_only=True)
class RecordsConsumed(Event):
    kind: ClassVar[str] = "records_consumed"
    consumer: str
    group: str | None
    records: list[dict]    # {"topic", "partition", "offset", "key", "value"} as poll() returned them


@dataclass(kw_only=True)
class RecordsProcessed(Event):
    kind: ClassVar[str] = "records_processed"
    consumer: str
    group: str | None
    records: list[dict]
    duplicates: list[dict] = field(default_factory=list)   # already processed before (by anyone)


@dataclass(kw_only=True)
class OffsetCommitFailed(Event):
    kind: ClassVar[str] = "offset_commit_failed"
    consumer: str
    group: str
    error: str
    offsets: dict


@dataclass(kw_only=True)
class OffsetsReset(Event):
    kind: ClassVar[str] = "offsets_reset"
    consumer: str
    topic: str
    partition: int
    strategy: str          # earliest, latest, or "seek"
    offset: int


@dataclass(kw_only=True)
class PreferredReadReplicaChanged(Event):
    """A consumer now fetches a partition from another replica (follower fetching, KIP-392): the
    leader named a `preferred_read_replica` (`replica` >= 0), or the consumer went back to the
    leader (`replica` -1: the follower answered OFFSET_OUT_OF_RANGE or a stale-metadata error, did
    not answer, left the metadata, or the choice expired after metadata.max.age.ms)."""
    kind: ClassVar[str] = "preferred_read_replica_changed"
    consumer: str
    topic: str
    partition: int
    replica: int           # the broker it fetches from now; -1: the leader
    previous: int          # the replica it fetched from before; -1: the leader
    leader: int            # the partition's leader as the consumer knows it
    reason: str


@dataclass(kw_only=True)
class ConsumerLeftGroup(Event):
    kind: ClassVar[str] = "consumer_left_group"
    consumer: str
    group: str
    member_id: str
    reason: str            # "the consumer is being closed", "consumer poll timeout has expired."


@dataclass(kw_only=True)
class ConsumerCrashed(Event):
    kind: ClassVar[str] = "consumer_crashed"
    consumer: str
    group: str | None


EVENT_TYPES.update(_by_kind([
    GroupStateChanged, MemberJoined, MemberRemoved, RebalanceStarted, RebalanceCompleted, OffsetsCommitted,
    CoordinatorLoaded, CoordinatorUnloaded, CoordinatorDiscovered, AssignmentReceived, PartitionsRevoked,
    RecordsConsumed, RecordsProcessed, OffsetCommitFailed, OffsetsReset, ConsumerLeftGroup, ConsumerCrashed,
    PreferredReadReplicaChanged]))


# -- KRaft's quorum controller (engine/controller/quorum_controller.py) --------------------------------
@dataclass(kw_only=True)
class QuorumControllerActivated(Event):
    """The Raft leader of the controller quorum has replayed everything before its epoch: it is the
    active controller (QuorumController.claim)."""
    kind: ClassVar[str] = "quorum_controller_activated"
    node: int
    epoch: int


@dataclass(kw_only=True)
class QuorumControllerRenounced(Event):
    kind: ClassVar[str] = "quorum_controller_renounced"
    node: int
    reason: str


@dataclass(kw_only=True)
class MetadataCommitted(Event):
    """Records of `__cluster_metadata` committed (a majority of voters has them), as Kafka's metadata
    shell prints them: {"type": "PARTITION_CHANGE_RECORD", "version": 2, "data": {...}}."""
    kind: ClassVar[str] = "metadata_committed"
    node: int
    base_offset: int
    last_offset: int
    epoch: int
    records: list[dict]


@dataclass(kw_only=True)
class BrokerRegistered(Event):
    """The controller accepted a broker's registration: its epoch is its RegisterBrokerRecord's offset."""
    kind: ClassVar[str] = "broker_registered"
    broker: int
    broker_epoch: int


@dataclass(kw_only=True)
class BrokerFenced(Event):
    kind: ClassVar[str] = "broker_fenced"
    broker: int
    reason: str


@dataclass(kw_only=True)
class BrokerUnfenced(Event):
    kind: ClassVar[str] = "broker_unfenced"
    broker: int


@dataclass(kw_only=True)
class BrokerMetadataApplied(Event):
    """A broker replayed committed metadata records up to `offset` (its metadata offset)."""
    kind: ClassVar[str] = "broker_metadata_applied"
    broker: int
    offset: int
    partitions_changed: int


EVENT_TYPES.update(_by_kind([
    QuorumControllerActivated, QuorumControllerRenounced, MetadataCommitted, BrokerRegistered, BrokerFenced,
    BrokerUnfenced, BrokerMetadataApplied]))


# -- the KRaft metadata quorum (engine/raft): Raft elections and the __cluster_metadata log --------
# `node` is the replica's node.id (Kafka's); epochs are Raft epochs (KIP-595).
@dataclass(kw_only=True)
class RaftElectionStarted(Event):
    kind: ClassVar[str] = "raft_election_started"
    node: int
    epoch: int                 # the epoch the candidate stands in
    retries: int = 1           # elections in a row without a leader (its backoff grows with it)


@dataclass(kw_only=True)
class RaftVoteCast(Event):
    kind: ClassVar[str] = "raft_vote_cast"
    voter: int
    candidate: int
    epoch: int
    granted: bool
    reason: str


@dataclass(kw_only=True)
class RaftLeaderElected(Event):
    kind: ClassVar[str] = "raft_leader_elected"
    node: int
    epoch: int
    granting_voters: list[int] = field(default_factory=list)
    epoch_start_offset: int = 0


@dataclass(kw_only=True)
class RaftLeaderResigned(Event):
    kind: ClassVar[str] = "raft_leader_resigned"
    node: int
    epoch: int
    reason: str


@dataclass(kw_only=True)
class RaftLogTruncated(Event):
    kind: ClassVar[str] = "raft_log_truncated"
    node: int
    from_offset: int
    to_offset: int
    diverging_epoch: int       # the epoch the leader said the logs diverge after


@dataclass(kw_only=True)
class MetadataHighWatermarkAdvanced(Event):
    kind: ClassVar[str] = "metadata_high_watermark_advanced"
    node: int                  # the Raft leader
    epoch: int
    high_watermark: int


EVENT_TYPES.update(_by_kind([
    RaftElectionStarted, RaftVoteCast, RaftLeaderElected, RaftLeaderResigned, RaftLogTruncated,
    MetadataHighWatermarkAdvanced]))


@dataclass(kw_only=True)
class ControllerNodeStarted(Event):
    """A dedicated KRaft controller node (process.roles=controller) started."""
    kind: ClassVar[str] = "controller_node_started"
    node: int
    restarted: bool = False


@dataclass(kw_only=True)
class ControllerNodeCrashed(Event):
    kind: ClassVar[str] = "controller_node_crashed"
    node: int


EVENT_TYPES.update(_by_kind([ControllerNodeStarted, ControllerNodeCrashed]))
