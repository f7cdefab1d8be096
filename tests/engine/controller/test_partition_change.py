"""KRaft's partition changes (engine/controller/partition_change.py) against PartitionChangeBuilder's rules."""
from __future__ import annotations

from engine.controller.partition_change import build_change, elect_any_leader, preferred_election
from engine.metadata.image import NO_LEADER, NO_LEADER_CHANGE, PartitionRegistration


def part(replicas=(1, 2, 3), isr=(1, 2, 3), leader=1) -> PartitionRegistration:
    return PartitionRegistration(list(replicas), list(isr), leader, 5, 7)


def test_current_leader_stays_while_valid():
    assert elect_any_leader(part(leader=2), [1, 2, 3], lambda r: True, False).leader == 2


def test_first_replica_in_isr_and_unfenced_leads_when_leader_fenced():
    election = elect_any_leader(part(leader=1), [2, 3], lambda r: r != 1, False)
    assert (election.leader, election.unclean) == (2, False)


def test_no_leader_without_an_eligible_replica_and_the_isr_is_not_emptied():
    record, election = build_change("AAAAAAAAAAAAAAAAAAAAAQ", 0, part(isr=(1,), leader=1), [],
                                    lambda r: r not in (1,), False)
    assert election.leader == NO_LEADER
    assert record is not None and record.leader == NO_LEADER and record.isr is None   # ISR keeps its last member


def test_unclean_election_sets_the_isr_to_the_new_leader():
    record, election = build_change("AAAAAAAAAAAAAAAAAAAAAQ", 0, part(isr=(1,), leader=1), [], lambda r: r == 3, True)
    assert election.unclean and record.leader == 3 and record.isr == [3]


def test_isr_shrink_alone_keeps_the_leader_field_unchanged():
    record, _ = build_change("AAAAAAAAAAAAAAAAAAAAAQ", 0, part(), [1, 2], lambda r: True, False)
    assert record.leader == NO_LEADER_CHANGE and record.isr == [1, 2]


def test_no_change_is_no_record():
    record, _ = build_change("AAAAAAAAAAAAAAAAAAAAAQ", 0, part(), [1, 2, 3], lambda r: True, False)
    assert record is None


def test_preferred_election_moves_leadership_back_to_the_first_replica():
    assert preferred_election(part(leader=2), lambda r: True).leader == 1
    assert preferred_election(part(isr=(2, 3), leader=2), lambda r: True).leader == 2   # preferred not in ISR
