"""RoundRobinAssignor ("roundrobin"): all partitions dealt out like cards.

All partitions of all subscribed topics are listed by (topic, partition) and dealt to the members
in member order by a circular iterator. A member not subscribed to a partition's topic is skipped
(the iterator moves past it without dealing). C0, C1 over t0, t1 with 3 partitions each gives
C0=[t0-0, t0-2, t1-1], C1=[t0-1, t1-0, t1-2].
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


def _all_partitions_sorted(partition_counts: dict[str, int]) -> list[TopicPartition]:
    return [TopicPartition(topic, p) for topic in sorted(partition_counts) for p in range(partition_counts[topic])]


class RoundRobinAssignor(PartitionAssignor):
    """Kafka's RoundRobinAssignor."""

    name = "roundrobin"

    def assign(self, partitions_per_topic: dict[str, int], subscriptions: dict[str, Subscription]) -> Assignment:
        ordered_members = member_order(subscriptions)
        assignment: dict[str, list[TopicPartition]] = {member_id: [] for member_id in ordered_members}
        partition_counts = subscribed_partition_counts(partitions_per_topic, subscriptions)
        position = 0                                    # the circular iterator's next member
        for partition in _all_partitions_sorted(partition_counts):
            while partition.topic not in subscriptions[ordered_members[position]].topics:
                position = (position + 1) % len(ordered_members)
            assignment[ordered_members[position]].append(partition)
            position = (position + 1) % len(ordered_members)
        return finished_assignment(assignment, subscriptions)
