"""One partition's next state in KRaft mode: Kafka's PartitionChangeBuilder, reduced.

Given a partition as the metadata image holds it, a target ISR and which brokers may lead
(registered, unfenced, not the one being removed), it builds the PartitionChangeRecord that moves the
partition there, or None when nothing changes (changeRecordIsNoOp):
- the current leader stays while it is acceptable and in the target ISR (electAnyLeader);
- otherwise the first replica, in replica order, that is acceptable and in the target ISR leads;
- with unclean.leader.election.enable, failing that, the first acceptable replica leads, and the
  ISR becomes just that leader (an unclean election: it may lose acknowledged records);
- with nobody to lead, the leader is NO_LEADER (-1);
- the ISR is never written empty: the last member of the ISR stays in it when it is fenced, so it
  can lead again cleanly when it comes back (Eligible Leader Replicas, KIP-966, replace that rule
  when enabled; the lab does not model ELR);
- a new leader is a new leader epoch; an ISR change alone is not (since metadata.version 3.6,
  MetadataVersion.isLeaderEpochBumpRequiredOnIsrShrink). Every change is a new partition epoch.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from engine.metadata import records as mr
from engine.metadata.image import NO_LEADER, NO_LEADER_CHANGE, PartitionRegistration


@dataclass(frozen=True)
class Election:
    leader: int
    unclean: bool


def elect_any_leader(partition: PartitionRegistration, target_isr: list[int],
                     acceptable: Callable[[int], bool], unclean_allowed: bool) -> Election:
    """PartitionChangeBuilder.electAnyLeader."""
    def valid(replica: int) -> bool:
        return replica in target_isr and acceptable(replica)
    if partition.leader >= 0 and valid(partition.leader):
        return Election(partition.leader, False)
    for replica in partition.replicas:
        if valid(replica):
            return Election(replica, False)
    if unclean_allowed:
        for replica in partition.replicas:
            if acceptable(replica):
                return Election(replica, True)
    return Election(NO_LEADER, False)


def preferred_election(partition: PartitionRegistration, acceptable: Callable[[int], bool]) -> Election:
    """PartitionChangeBuilder's PREFERRED election: the first replica, if it may lead and is in the ISR."""
    preferred = partition.replicas[0]
    if preferred in partition.isr and acceptable(preferred):
        return Election(preferred, False)
    return Election(partition.leader, False)


def build_change(topic_id: str, partition_id: int, partition: PartitionRegistration, target_isr: list[int],
                 acceptable: Callable[[int], bool], unclean_allowed: bool, *,
                 election: Election | None = None) -> tuple[mr.PartitionChangeRecord | None, Election]:
    """The record that moves the partition to `target_isr` with a valid leader (None: no change)."""
    if election is None:
        election = elect_any_leader(partition, target_isr, acceptable, unclean_allowed)
    leader = NO_LEADER_CHANGE
    isr: list[int] | None = None
    if election.leader != partition.leader:
        leader = election.leader
        if election.unclean:
            isr = [election.leader]
    if isr is None and target_isr and target_isr != partition.isr:
        isr = list(target_isr)
    if leader == NO_LEADER_CHANGE and isr is None:
        return None, election
    record = mr.PartitionChangeRecord(partition_id=partition_id, topic_id=topic_id,
                                      isr=isr, leader=leader)
    return record, election
