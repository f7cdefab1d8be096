"""The bytes a consumer puts in JoinGroup (its subscription) and SyncGroup (assignments).

Kafka's ConsumerProtocol: the group coordinator stores these bytes without reading them; only the
members (the leader runs the assignor) decode them. Each starts with an INT16 version.

    ConsumerProtocolSubscription (version 2) =>
      version          INT16
      topics           ARRAY(STRING)
      user_data        NULLABLE_BYTES     the sticky assignor's previous assignment (see below)
      owned_partitions ARRAY(topic STRING, partitions ARRAY(INT32))      v1+
      generation_id    INT32                                             v2+

    ConsumerProtocolAssignment (version 2) =>
      version             INT16
      assigned_partitions ARRAY(topic STRING, partitions ARRAY(INT32))
      user_data           NULLABLE_BYTES

    StickyAssignor user data (STICKY_ASSIGNOR_USER_DATA_V1, no version prefix) =>
      previous_assignment ARRAY(topic STRING, partitions ARRAY(INT32))
      generation          INT32

The eager "sticky" assignor revokes everything before rejoining, so its members carry what they
owned in user data; cooperative members report it in owned_partitions. Topics appear in the order
given; partitions are grouped by topic in first-seen order, as Java's serializer does.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.groups import kafka_types as kt
from engine.groups.assignors.types import Subscription, TopicPartition

SUBSCRIPTION_VERSION = 2
ASSIGNMENT_VERSION = 2
STICKY = "sticky"


@dataclass(frozen=True)
class MemberSubscription:
    """A decoded ConsumerProtocolSubscription."""
    topics: list[str]
    owned_partitions: list[TopicPartition] = field(default_factory=list)
    generation: int = -1
    user_data: bytes | None = None

    def for_assignor(self, protocol: str) -> Subscription:
        """What the named assignor sees: the sticky assignor reads ownership from user data."""
        if protocol == STICKY:
            owned, generation = ([], -1) if not self.user_data else decode_sticky_user_data(self.user_data)
            return Subscription(list(self.topics), owned, generation)
        return Subscription(list(self.topics), list(self.owned_partitions), self.generation)


def _write_topic_partitions(partitions: list[TopicPartition]) -> bytes:
    by_topic: dict[str, list[int]] = {}
    for tp in partitions:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return kt.array(by_topic.items(),
                    lambda item: kt.string(item[0]) + kt.array(item[1], kt.int32))


def _read_topic_partitions(buf: bytes, position: int) -> tuple[list[TopicPartition], int]:
    def one(b: bytes, pos: int) -> tuple[list[TopicPartition], int]:
        topic, pos = kt.read_string(b, pos)
        numbers, pos = kt.read_array(b, pos, kt.read_int32)
        return [TopicPartition(topic, n) for n in numbers], pos
    groups, position = kt.read_array(buf, position, one)
    return [tp for group in groups for tp in group], position


def encode_subscription(topics: list[str], owned_partitions: Iterable[TopicPartition] = (),
                        generation: int = -1, user_data: bytes | None = None) -> bytes:
    return b"".join((
        kt.int16(SUBSCRIPTION_VERSION),
        kt.array(topics, kt.string),
        kt.nullable_bytes(user_data),
        _write_topic_partitions(list(owned_partitions)),
        kt.int32(generation),
    ))


def decode_subscription(data: bytes) -> MemberSubscription:
    version, position = kt.read_int16(data, 0)
    topics, position = kt.read_array(data, position, kt.read_string)
    user_data, position = kt.read_nullable_bytes(data, position)
    owned: list[TopicPartition] = []
    generation = -1
    if version >= 1:
        owned, position = _read_topic_partitions(data, position)
    if version >= 2:
        generation, position = kt.read_int32(data, position)
    return MemberSubscription(topics, owned, generation, user_data)


def encode_assignment(partitions: list[TopicPartition], user_data: bytes | None = None) -> bytes:
    return kt.int16(ASSIGNMENT_VERSION) + _write_topic_partitions(list(partitions)) + kt.nullable_bytes(user_data)


def decode_assignment(data: bytes) -> list[TopicPartition]:
    """The assigned partitions; empty bytes (what the coordinator sends a member left out) is none."""
    if not data:
        return []
    _, position = kt.read_int16(data, 0)
    partitions, _ = _read_topic_partitions(data, position)
    return partitions


def encode_sticky_user_data(previous: list[TopicPartition], generation: int) -> bytes:
    return _write_topic_partitions(list(previous)) + kt.int32(generation)


def decode_sticky_user_data(data: bytes) -> tuple[list[TopicPartition], int]:
    partitions, position = _read_topic_partitions(data, 0)
    generation = -1
    if position < len(data):
        generation, _ = kt.read_int32(data, position)
    return partitions, generation
