"""The vocabulary every assignor shares: TopicPartition, Subscription, and the assignor contract.

Also the two orderings Kafka's assignors rely on:

- `member_order`: AbstractPartitionAssignor.MemberInfo.compareTo. Static members (with a
  group.instance.id) come first, sorted by instance id; dynamic members follow, sorted by member
  id. Java compares strings by UTF-16 code unit, which `java_string_sort_key` reproduces.
- `subscription_iteration_order`: the order the leader's `Map<String, Subscription>` (a HashMap
  filled in JoinGroup member order) yields members. The sticky assignors break some ties by it,
  so a `subscriptions` dict is read as "members in the order they were put into that HashMap".
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engine.common.hashing import java_hashmap_order, java_string_hashcode, java_string_sort_key, to_int32

_JAVA_HASH_PRIME = 31

Assignment = dict[str, list["TopicPartition"]]


@dataclass(frozen=True, order=True)
class TopicPartition:
    """One partition of one topic. Sorts by (topic, partition); topic names are ASCII in Kafka."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"

    def java_hashcode(self) -> int:
        """org.apache.kafka.common.TopicPartition.hashCode (decides HashSet/HashMap order)."""
        return to_int32(_JAVA_HASH_PRIME * (_JAVA_HASH_PRIME + self.partition) + java_string_hashcode(self.topic))


@dataclass
class Subscription:
    """What a member sends in JoinGroup: its topics, what it owns now, and its last generation.

    `generation` is -1 (DEFAULT_GENERATION) for a member that never completed a rebalance.
    """

    topics: list[str]
    owned_partitions: list[TopicPartition] = field(default_factory=list)
    generation: int = -1
    group_instance_id: str | None = None


class PartitionAssignor:
    """Base class of the client-side assignors the group leader runs (ConsumerPartitionAssignor).

    Contract for `assign(partitions_per_topic, subscriptions)`:

    - `partitions_per_topic` maps topic -> partition count. Topics nobody subscribes to, and topics
      a member subscribes to but that are missing here (no metadata yet), are skipped, as Kafka
      skips them.
    - `subscriptions` maps member id -> Subscription, in JoinGroup order.
    - Returns an entry for every member (possibly an empty list), members in `member_order`, each
      list sorted by (topic, partition). Each partition of a subscribed topic goes to exactly one
      member subscribed to that topic (cooperative-sticky may hold back partitions that must
      first be revoked).
    - Pure and deterministic: the same input gives the same output; arguments are not mutated.
    - Raises ValueError for input no Kafka client could send (negative partition counts), and
      RuntimeError where Kafka's own assignor throws IllegalStateException.
    """

    name: str = ""

    def assign(self, partitions_per_topic: dict[str, int], subscriptions: dict[str, Subscription]) -> Assignment:
        raise NotImplementedError


def member_order(subscriptions: dict[str, Subscription]) -> list[str]:
    """Member ids sorted like Kafka's MemberInfo: static members by instance id, then the rest by id.

    Java sorts stably from HashMap order, which only shows when two members share an instance id.
    """
    def key(member_id: str) -> tuple[int, bytes]:
        instance_id = subscriptions[member_id].group_instance_id
        if instance_id is not None:
            return (0, java_string_sort_key(instance_id))
        return (1, java_string_sort_key(member_id))

    return sorted(subscription_iteration_order(subscriptions), key=key)


def subscription_iteration_order(subscriptions: dict[str, Subscription]) -> list[str]:
    """Member ids in the order Java's HashMap of subscriptions iterates them."""
    return java_hashmap_order(subscriptions, java_string_hashcode)


def subscribed_partition_counts(partitions_per_topic: dict[str, int],
                                subscriptions: dict[str, Subscription]) -> dict[str, int]:
    """Partition counts of the topics some member subscribes to and that have partitions."""
    for topic, count in partitions_per_topic.items():
        if count < 0:
            raise ValueError(f"topic {topic!r} has a negative partition count {count}")
    subscribed = {topic for subscription in subscriptions.values() for topic in subscription.topics}
    return {topic: count for topic, count in sorted(partitions_per_topic.items())
            if topic in subscribed and count > 0}


def finished_assignment(assignment: dict[str, list[TopicPartition]],
                        subscriptions: dict[str, Subscription]) -> Assignment:
    """The assignment in the shape the contract promises: every member, sorted keys and lists."""
    return {member_id: sorted(assignment.get(member_id, [])) for member_id in member_order(subscriptions)}
