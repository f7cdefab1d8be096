"""What the group coordinator writes to `__consumer_offsets`: record keys and values, byte for byte.

Every record's key and value start with an INT16 version; the key's version says what kind of
record it is. A null value (a tombstone) deletes the key once the log is compacted — and, when the
coordinator replays the log, removes the offset or the group at once.

    OffsetCommitKey (version 0 or 1; Kafka writes 1) =>
      group      STRING
      topic      STRING
      partition  INT32
    OffsetCommitValue (Kafka writes version 3; versions 0-3 are read) =>
      offset           INT64     the next offset to read (last processed + 1)
      leader_epoch     INT32     v3+: epoch of the last consumed record, -1 if unknown
      metadata         STRING
      commit_timestamp INT64
      expire_timestamp INT64     v1 only

    GroupMetadataKey (version 2) =>
      group      STRING
    GroupMetadataValue (Kafka writes version 3) =>
      protocol_type           STRING            "consumer"
      generation              INT32
      protocol                NULLABLE_STRING   the chosen assignor; null for an empty group
      leader                  NULLABLE_STRING   the leader's member id
      current_state_timestamp INT64             v2+: when the group entered its state, -1 unknown
      members ARRAY of
        member_id          STRING
        group_instance_id  NULLABLE_STRING      v3+
        client_id          STRING
        client_host        STRING
        rebalance_timeout  INT32                v1+
        session_timeout    INT32
        subscription       BYTES                ConsumerProtocolSubscription for `protocol`
        assignment         BYTES                ConsumerProtocolAssignment

Sources: Kafka's OffsetCommitKey/Value.json, GroupMetadataKey/Value.json and
GroupCoordinatorRecordHelpers (value versions 3 and 3).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import overload

from engine.groups import kafka_types as kt

OFFSETS_TOPIC = "__consumer_offsets"
OFFSET_COMMIT_KEY_VERSION = 1
GROUP_METADATA_KEY_VERSION = 2
OFFSET_COMMIT_VALUE_VERSION = 3
GROUP_METADATA_VALUE_VERSION = 3
NO_LEADER_EPOCH = -1


@dataclass(frozen=True)
class OffsetCommitKey:
    group: str
    topic: str
    partition: int


@dataclass(frozen=True)
class OffsetCommitValue:
    offset: int
    leader_epoch: int = NO_LEADER_EPOCH
    metadata: str = ""
    commit_timestamp: int = -1
    expire_timestamp: int = -1


@dataclass(frozen=True)
class GroupMetadataKey:
    group: str


@dataclass(frozen=True)
class MemberMetadata:
    member_id: str
    client_id: str
    client_host: str
    rebalance_timeout: int
    session_timeout: int
    subscription: bytes
    assignment: bytes
    group_instance_id: str | None = None


@dataclass(frozen=True)
class GroupMetadataValue:
    protocol_type: str
    generation: int
    protocol: str | None
    leader: str | None
    current_state_timestamp: int = -1
    members: list[MemberMetadata] = field(default_factory=list)


Key = OffsetCommitKey | GroupMetadataKey
Value = OffsetCommitValue | GroupMetadataValue


# -- keys --------------------------------------------------------------------------------------
def encode_key(key: Key) -> bytes:
    if isinstance(key, OffsetCommitKey):
        return b"".join((kt.int16(OFFSET_COMMIT_KEY_VERSION), kt.string(key.group), kt.string(key.topic),
                         kt.int32(key.partition)))
    return kt.int16(GROUP_METADATA_KEY_VERSION) + kt.string(key.group)


class UnknownKeyVersionError(ValueError):
    """A key whose version is neither an offset commit's (0, 1) nor group metadata's (2): Kafka's
    GroupMetadataManager.readMessageKey reads it as an UnknownKey, which a load skips."""

    def __init__(self, version: int) -> None:
        super().__init__(f"unknown __consumer_offsets key version {version}")
        self.version = version


def decode_key(data: bytes) -> Key:
    """The key; UnknownKeyVersionError for a version it does not know, ValueError for bytes it cannot read."""
    version, position = kt.read_int16(data, 0)
    if version not in (0, 1, GROUP_METADATA_KEY_VERSION):   # checked first, as readMessageKey does
        raise UnknownKeyVersionError(version)
    group, position = kt.read_string(data, position)
    if version in (0, 1):
        topic, position = kt.read_string(data, position)
        partition, position = kt.read_int32(data, position)
        return OffsetCommitKey(group, topic, partition)
    return GroupMetadataKey(group)


# -- values ------------------------------------------------------------------------------------
@overload
def encode_value(value: Value) -> bytes: ...
@overload
def encode_value(value: None) -> None: ...
def encode_value(value: Value | None) -> bytes | None:
    """The value bytes; None (a tombstone) stays None."""
    if value is None:
        return None
    if isinstance(value, OffsetCommitValue):
        return b"".join((kt.int16(OFFSET_COMMIT_VALUE_VERSION), kt.int64(value.offset), kt.int32(value.leader_epoch),
                         kt.string(value.metadata), kt.int64(value.commit_timestamp)))
    return b"".join((
        kt.int16(GROUP_METADATA_VALUE_VERSION),
        kt.string(value.protocol_type),
        kt.int32(value.generation),
        kt.nullable_string(value.protocol),
        kt.nullable_string(value.leader),
        kt.int64(value.current_state_timestamp),
        kt.array(value.members, _encode_member),
    ))


def _encode_member(m: MemberMetadata) -> bytes:
    return b"".join((kt.string(m.member_id), kt.nullable_string(m.group_instance_id), kt.string(m.client_id),
                     kt.string(m.client_host), kt.int32(m.rebalance_timeout), kt.int32(m.session_timeout),
                     kt.bytes_field(m.subscription), kt.bytes_field(m.assignment)))


@overload
def decode_value(key: OffsetCommitKey, data: bytes | None) -> OffsetCommitValue | None: ...
@overload
def decode_value(key: GroupMetadataKey, data: bytes | None) -> GroupMetadataValue | None: ...
@overload
def decode_value(key: Key, data: bytes | None) -> Value | None: ...
def decode_value(key: Key, data: bytes | None) -> Value | None:
    """The value for `key` (it says which schema), or None for a tombstone."""
    if data is None:
        return None
    if isinstance(key, OffsetCommitKey):
        return _decode_offset_commit_value(data)
    return _decode_group_metadata_value(data)


def _decode_offset_commit_value(data: bytes) -> OffsetCommitValue:
    version, position = kt.read_int16(data, 0)
    if not 0 <= version <= 4:
        raise ValueError(f"unknown OffsetCommitValue version {version}")
    offset, position = kt.read_int64(data, position)
    epoch = NO_LEADER_EPOCH
    if version >= 3:
        epoch, position = kt.read_int32(data, position)
    metadata, position = kt.read_string(data, position)
    commit_timestamp, position = kt.read_int64(data, position)
    expire = -1
    if version == 1:
        expire, position = kt.read_int64(data, position)
    return OffsetCommitValue(offset, epoch, metadata, commit_timestamp, expire)


def _decode_group_metadata_value(data: bytes) -> GroupMetadataValue:
    version, position = kt.read_int16(data, 0)
    if not 0 <= version <= 3:
        raise ValueError(f"unsupported GroupMetadataValue version {version}")
    protocol_type, position = kt.read_string(data, position)
    generation, position = kt.read_int32(data, position)
    protocol, position = kt.read_nullable_string(data, position)
    leader, position = kt.read_nullable_string(data, position)
    timestamp = -1
    if version >= 2:
        timestamp, position = kt.read_int64(data, position)

    def member(buf: bytes, pos: int) -> tuple[MemberMetadata, int]:
        member_id, pos = kt.read_string(buf, pos)
        instance_id = None
        if version >= 3:
            instance_id, pos = kt.read_nullable_string(buf, pos)
        client_id, pos = kt.read_string(buf, pos)
        client_host, pos = kt.read_string(buf, pos)
        rebalance_timeout = -1
        if version >= 1:
            rebalance_timeout, pos = kt.read_int32(buf, pos)
        session_timeout, pos = kt.read_int32(buf, pos)
        if version == 0:
            rebalance_timeout = session_timeout      # v0 had none: Kafka uses the session timeout
        subscription, pos = kt.read_bytes(buf, pos)
        assignment, pos = kt.read_bytes(buf, pos)
        return MemberMetadata(member_id, client_id, client_host, rebalance_timeout, session_timeout,
                              subscription, assignment, instance_id), pos
    members, _ = kt.read_array(data, position, member)
    return GroupMetadataValue(protocol_type, generation, protocol, leader, timestamp, members)


# -- whole records -----------------------------------------------------------------------------
def offset_commit_record(group: str, topic: str, partition: int, offset: int, *, leader_epoch: int = NO_LEADER_EPOCH,
                         metadata: str = "", commit_timestamp: int) -> tuple[bytes, bytes]:
    key = OffsetCommitKey(group, topic, partition)
    return encode_key(key), encode_value(OffsetCommitValue(offset, leader_epoch, metadata, commit_timestamp))


def offset_tombstone(group: str, topic: str, partition: int) -> tuple[bytes, None]:
    return encode_key(OffsetCommitKey(group, topic, partition)), None


def group_record(group: str, value: GroupMetadataValue | None) -> tuple[bytes, bytes | None]:
    """A group metadata record, or the group's tombstone when `value` is None."""
    return encode_key(GroupMetadataKey(group)), encode_value(value)


def describe_record(key_bytes: bytes, value_bytes: bytes | None) -> dict:
    """A record of __consumer_offsets as plain data (for dump tools and the browser)."""
    key = decode_key(key_bytes)
    value = decode_value(key, value_bytes)
    if isinstance(key, OffsetCommitKey):
        out = {"type": "offset_commit", "group": key.group, "topic": key.topic, "partition": key.partition}
        if isinstance(value, OffsetCommitValue):   # decode_value gives an offset key one (or None)
            out.update(offset=value.offset, leader_epoch=value.leader_epoch, metadata=value.metadata,
                       commit_timestamp=value.commit_timestamp)
    else:
        out = {"type": "group_metadata", "group": key.group}
        if isinstance(value, GroupMetadataValue):
            out.update(generation=value.generation, protocol=value.protocol, leader=value.leader,
                       members=[m.member_id for m in value.members])
    out["tombstone"] = value is None
    return out
