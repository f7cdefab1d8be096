"""Kafka's offline-partition leader election (PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection)."""
from __future__ import annotations

from engine.replication.controller import elect_leader


def test_it_picks_the_first_replica_in_assignment_order_not_isr_order():
    assert elect_leader([3, 1, 2], [1, 2, 3], {1, 2, 3}, unclean=False) == (3, [1, 2, 3], False)


def test_it_picks_the_first_live_replica_that_is_in_the_isr():
    assert elect_leader([3, 1, 2], [1, 2, 3], {1, 2}, unclean=False) == (1, [1, 2], False)
    assert elect_leader([1, 2, 3], [3, 2], {1, 2, 3}, unclean=False) == (2, [3, 2], False)


def test_it_drops_dead_replicas_from_the_isr_and_keeps_its_order():
    assert elect_leader([1, 2, 3], [3, 1, 2], {2, 3}, unclean=False) == (2, [3, 2], False)


def test_it_prefers_a_clean_leader_even_when_unclean_election_is_enabled():
    assert elect_leader([1, 2, 3], [3], {1, 2, 3}, unclean=True) == (3, [3], False)


def test_it_leaves_the_partition_offline_and_the_isr_alone_when_no_isr_member_is_alive():
    leader, isr, unclean = elect_leader([1, 2, 3], [3], {1, 2}, unclean=False)
    assert (leader, isr, unclean) == (-1, [3], False)


def test_it_picks_the_first_live_replica_even_out_of_sync_when_unclean_election_is_enabled():
    assert elect_leader([3, 2, 1], [1], {2, 3}, unclean=True) == (3, [3], True)


def test_it_finds_no_leader_when_no_replica_is_alive_even_if_unclean():
    assert elect_leader([1, 2], [1, 2], set(), unclean=True) == (-1, [1, 2], False)
    assert elect_leader([1, 2], [1, 2], {5}, unclean=True) == (-1, [1, 2], False)


def test_it_does_not_change_the_callers_isr_list():
    isr = [3]
    _, new_isr, _ = elect_leader([1, 2, 3], isr, {1}, unclean=False)
    assert new_isr == [3] and new_isr is not isr
