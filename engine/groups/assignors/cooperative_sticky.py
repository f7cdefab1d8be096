"""CooperativeStickyAssignor ("cooperative-sticky"): the sticky target, reached in two rebalances.

Under the cooperative protocol (KIP-429) members keep consuming during a rebalance, so a
partition may not be handed to its new owner while the old owner still has it. Kafka computes
the sticky target assignment and then removes from it every partition that is "transferring
ownership" (adjustAssignment): assigned to one member while another member still owns it.
The old owner sees the partition missing from its assignment, revokes it and rejoins at once;
in that second rebalance nobody owns it any more, so it is handed out without delay. It usually
goes to the member it was withheld for, but not always: the second rebalance deals free
partitions afresh (Kafka's own code behaves the same way).

Which partitions are transferring:
- constrained path (all members subscribe to the same topics): those the sticky algorithm took
  from an owner over its quota, plus those claimed by several members in the same generation;
- general path: any partition a member is newly assigned that another member owned and lost
  (computePartitionsTransferringOwnership).
A partition whose owner left the group, or that nobody owned, is assigned immediately.
"""
from __future__ import annotations

from engine.groups.assignors.sticky import TransferringOwnership, sticky_assignment
from engine.groups.assignors.types import (
    Assignment,
    PartitionAssignor,
    Subscription,
    TopicPartition,
    finished_assignment,
)


def _moving_between_members(subscriptions: dict[str, Subscription],
                            assignment: dict[str, list[TopicPartition]]) -> TransferringOwnership:
    """computePartitionsTransferringOwnership: newly assigned partitions that someone revokes."""
    added: TransferringOwnership = {}
    revoked: set[TopicPartition] = set()
    for member_id, assigned in assignment.items():
        owned = set(subscriptions[member_id].owned_partitions)
        added.update({tp: member_id for tp in assigned if tp not in owned})
        assigned_set = set(assigned)
        revoked.update(tp for tp in subscriptions[member_id].owned_partitions if tp not in assigned_set)
    return {tp: member_id for tp, member_id in added.items() if tp in revoked}


def partitions_transferring_ownership(partitions_per_topic: dict[str, int],
                                      subscriptions: dict[str, Subscription]
                                      ) -> tuple[dict[str, list[TopicPartition]], TransferringOwnership]:
    """The sticky target assignment and the partitions withheld from it this generation.

    The second value maps each withheld partition to the member that will get it next time.
    """
    target, transferring = sticky_assignment(partitions_per_topic, subscriptions)
    if transferring is None:
        transferring = _moving_between_members(subscriptions, target)
    return target, transferring


def withheld_partitions(partitions_per_topic: dict[str, int],
                        subscriptions: dict[str, Subscription]) -> TransferringOwnership:
    """Partitions the cooperative assignor holds back until their current owner revokes them."""
    _, transferring = partitions_transferring_ownership(partitions_per_topic, subscriptions)
    return dict(sorted(transferring.items()))


def _without_transferring(target: dict[str, list[TopicPartition]],
                          transferring: TransferringOwnership) -> dict[str, list[TopicPartition]]:
    adjusted = {member_id: list(partitions) for member_id, partitions in target.items()}
    for partition, new_owner in transferring.items():
        adjusted[new_owner].remove(partition)
    return adjusted


class CooperativeStickyAssignor(PartitionAssignor):
    """Kafka's CooperativeStickyAssignor without rack awareness."""

    name = "cooperative-sticky"

    def assign(self, partitions_per_topic: dict[str, int], subscriptions: dict[str, Subscription]) -> Assignment:
        target, transferring = partitions_transferring_ownership(partitions_per_topic, subscriptions)
        return finished_assignment(_without_transferring(target, transferring), subscriptions)
