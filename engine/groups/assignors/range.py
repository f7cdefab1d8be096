"""RangeAssignor ("range"): each topic is cut into contiguous blocks, one per subscriber.

Per topic, with its subscribers in member order and n partitions over c subscribers:
q = n // c and r = n % c; subscriber i gets partitions [i*q + min(i, r), ...) of length
q + 1 if i < r else q. Topics are independent, so the first members get the extra partition of
every topic: C0, C1 over t0, t1 with 3 partitions each gives C0=[t0-0, t0-1, t1-0, t1-1],
C1=[t0-2, t1-2].

Kafka's rack-aware variant (used only when consumers and replicas report racks) is not modelled;
this is the rack-less algorithm.
"""
from __future__ import annotations

from engine.groups.assignors.types import (
    Assignment,
    PartitionAssignor,
    Subscription,
    TopicPartition,
    finished_assignment,
    member_order,
    subscribed_partition_counts,
)


def _subscribers_in_member_order(topic: str, ordered_members: list[str],
                                 subscriptions: dict[str, Subscription]) -> list[str]:
    return [member_id for member_id in ordered_members if topic in subscriptions[member_id].topics]


def _ranges(topic: str, num_partitions: int, subscribers: list[str]) -> dict[str, list[TopicPartition]]:
    """Contiguous blocks of `topic`: q + 1 partitions for the first r subscribers, q for the rest."""
    per_member, extra = divmod(num_partitions, len(subscribers))
    blocks: dict[str, list[TopicPartition]] = {}
    start = 0
    for i, member_id in enumerate(subscribers):
        length = per_member + (1 if i < extra else 0)
        blocks[member_id] = [TopicPartition(topic, p) for p in range(start, start + length)]
        start += length
    return blocks


class RangeAssignor(PartitionAssignor):
    """Kafka's RangeAssignor without rack awareness."""

    name = "range"

    def assign(self, partitions_per_topic: dict[str, int], subscriptions: dict[str, Subscription]) -> Assignment:
        ordered_members = member_order(subscriptions)
        assignment: dict[str, list[TopicPartition]] = {member_id: [] for member_id in ordered_members}
        for topic, num_partitions in subscribed_partition_counts(partitions_per_topic, subscriptions).items():
            subscribers = _subscribers_in_member_order(topic, ordered_members, subscriptions)
            for member_id, block in _ranges(topic, num_partitions, subscribers).items():
                assignment[member_id].extend(block)
        return finished_assignment(assignment, subscriptions)
