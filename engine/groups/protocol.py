"""The group and offset requests consumers send brokers, as dataclasses with Kafka's field names.

Only the fields the lab uses are kept (see Kafka's FindCoordinatorRequest.json, JoinGroupRequest.json,
SyncGroupRequest.json, HeartbeatRequest.json, LeaveGroupRequest.json, OffsetCommitRequest.json,
OffsetFetchRequest.json, ListOffsetsRequest.json and their responses). Errors travel as Kafka's
error names ("NONE", "REBALANCE_IN_PROGRESS", ...: engine.common.errors.Errors, a str). Protocol
metadata (a member's subscription) and assignments travel as the bytes of Kafka's ConsumerProtocol
(see consumer_protocol.py), the coordinator never looks inside them, as in Kafka.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engine.common.errors import Errors

UNKNOWN_MEMBER_ID = ""              # JoinGroupRequest.UNKNOWN_MEMBER_ID
UNKNOWN_GENERATION_ID = -1          # a member outside any generation (or a simple consumer)
CONSUMER_PROTOCOL_TYPE = "consumer"
LATEST_TIMESTAMP = -1               # ListOffsetsRequest.LATEST_TIMESTAMP
EARLIEST_TIMESTAMP = -2             # ListOffsetsRequest.EARLIEST_TIMESTAMP
MAX_TIMESTAMP = -3                  # ListOffsetsRequest.MAX_TIMESTAMP (KIP-734)


# -- FindCoordinator -------------------------------------------------------------------------
@dataclass(slots=True)
class FindCoordinatorRequest:
    key: str                        # the group id
    key_type: int = 0               # 0: group, 1: transaction


@dataclass(slots=True)
class FindCoordinatorResponse:
    error: str
    node_id: int = -1


# -- JoinGroup -------------------------------------------------------------------------------
@dataclass(slots=True)
class JoinGroupProtocol:
    name: str                       # an assignor name: "range", "cooperative-sticky", ...
    metadata: bytes                 # ConsumerProtocolSubscription bytes


@dataclass(slots=True)
class JoinGroupRequest:
    group_id: str
    session_timeout_ms: int
    rebalance_timeout_ms: int       # the consumer sends its max.poll.interval.ms
    member_id: str
    protocol_type: str
    protocols: list[JoinGroupProtocol]
    group_instance_id: str | None = None
    client_id: str = ""             # in Kafka this comes from the request header
    reason: str | None = None


@dataclass(slots=True)
class JoinGroupMember:
    member_id: str
    metadata: bytes
    group_instance_id: str | None = None


@dataclass(slots=True)
class JoinGroupResponse:
    error: str
    member_id: str = UNKNOWN_MEMBER_ID
    generation_id: int = UNKNOWN_GENERATION_ID
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    members: list[JoinGroupMember] = field(default_factory=list)   # only the leader gets them


# -- SyncGroup -------------------------------------------------------------------------------
@dataclass(slots=True)
class SyncGroupAssignment:
    member_id: str
    assignment: bytes               # ConsumerProtocolAssignment bytes


@dataclass(slots=True)
class SyncGroupRequest:
    group_id: str
    generation_id: int
    member_id: str
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignments: list[SyncGroupAssignment] = field(default_factory=list)   # empty from followers
    group_instance_id: str | None = None


@dataclass(slots=True)
class SyncGroupResponse:
    error: str
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


# -- Heartbeat and LeaveGroup ----------------------------------------------------------------
@dataclass(slots=True)
class HeartbeatRequest:
    group_id: str
    generation_id: int
    member_id: str
    group_instance_id: str | None = None


@dataclass(slots=True)
class HeartbeatResponse:
    error: str


@dataclass(slots=True)
class MemberIdentity:
    member_id: str
    group_instance_id: str | None = None
    reason: str | None = None


@dataclass(slots=True)
class LeaveGroupRequest:
    group_id: str
    members: list[MemberIdentity]


@dataclass(slots=True)
class LeaveGroupMemberResponse:
    member_id: str
    error: str


@dataclass(slots=True)
class LeaveGroupResponse:
    error: str
    members: list[LeaveGroupMemberResponse] = field(default_factory=list)


# -- OffsetCommit and OffsetFetch ------------------------------------------------------------
@dataclass(slots=True)
class OffsetCommitPartition:
    topic: str
    partition: int
    committed_offset: int           # the NEXT offset to read: last processed + 1
    committed_leader_epoch: int = -1
    committed_metadata: str = ""


@dataclass(slots=True)
class OffsetCommitRequest:
    group_id: str
    generation_id: int              # -1 from a consumer that does not use group management
    member_id: str
    partitions: list[OffsetCommitPartition]
    group_instance_id: str | None = None


@dataclass(slots=True)
class OffsetCommitPartitionResponse:
    topic: str
    partition: int
    error: str


@dataclass(slots=True)
class OffsetCommitResponse:
    partitions: list[OffsetCommitPartitionResponse]

    @property
    def error(self) -> str:
        """The first partition error (a commit fails or succeeds as a whole here)."""
        return next((p.error for p in self.partitions if p.error != Errors.NONE), Errors.NONE)


@dataclass(slots=True)
class OffsetFetchRequest:
    group_id: str
    partitions: list[tuple[str, int]] | None = None   # None: every partition the group committed
    require_stable: bool = False


@dataclass(slots=True)
class OffsetFetchPartition:
    topic: str
    partition: int
    committed_offset: int           # -1: nothing committed
    committed_leader_epoch: int = -1
    metadata: str = ""
    error: str = Errors.NONE


@dataclass(slots=True)
class OffsetFetchResponse:
    error: str
    partitions: list[OffsetFetchPartition] = field(default_factory=list)


# -- ListOffsets -----------------------------------------------------------------------------
@dataclass(slots=True)
class ListOffsetsPartition:
    topic: str
    partition: int
    timestamp: int                  # -1 latest, -2 earliest, -3 max timestamp, or a time in ms
    current_leader_epoch: int = -1


@dataclass(slots=True)
class ListOffsetsRequest:
    replica_id: int                 # -1 for a consumer
    isolation_level: int            # 0 read_uncommitted, 1 read_committed
    partitions: list[ListOffsetsPartition]


@dataclass(slots=True)
class ListOffsetsPartitionResponse:
    topic: str
    partition: int
    error: str
    timestamp: int = -1
    offset: int = -1
    leader_epoch: int = -1


@dataclass(slots=True)
class ListOffsetsResponse:
    partitions: list[ListOffsetsPartitionResponse]
