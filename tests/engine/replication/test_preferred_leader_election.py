"""Preferred leader election (kafka-leader-election --election-type preferred) and the controller's
auto.leader.rebalance.enable task."""
from __future__ import annotations

import pytest

from engine.cluster import Cluster, ClusterError
from engine.common.errors import Errors


def moved_away(tmp_path, config=None) -> tuple[Cluster, list]:
    """t has 3 partitions, broker 1 preferred for t-0; broker 1 was killed and came back: it follows."""
    events: list = []
    cluster = Cluster(brokers=3, data_dir=str(tmp_path), seed=2, config=config, on_event=events.append)
    cluster.create_topic("t", partitions=3, replication_factor=3,
                         replica_assignment=[[1, 2, 3], [2, 3, 1], [3, 1, 2]])
    cluster.run_until_idle()
    cluster.kill_broker(1)
    cluster.run_for(20_000)
    cluster.restart_broker(1)
    cluster.run_until_idle()
    assert cluster.leader_of("t", 0) != 1 and 1 in cluster.partition_state("t", 0)["isr"]
    return cluster, events


def test_a_preferred_election_moves_leadership_back_and_keeps_the_isr(tmp_path):
    cluster, events = moved_away(tmp_path)
    before = cluster.partition_state("t", 0)
    assert cluster.elect_leaders("preferred", [("t", 0)]) == {"t-0": Errors.NONE}
    after = cluster.partition_state("t", 0)
    assert after["leader"] == 1 and after["isr"] == before["isr"]
    assert after["leader_epoch"] == before["leader_epoch"] + 1
    elected = [e for e in events if e.kind == "leader_elected" and e.reason == "preferred replica election"]
    assert [(e.previous_leader, e.leader) for e in elected] == [(before["leader"], 1)]
    cluster.run_until_idle()
    assert cluster.brokers[1].partitions[("t", 0)].role == "leader"
    assert cluster.elect_leaders("preferred", [("t", 0)]) == {"t-0": Errors.ELECTION_NOT_NEEDED}
    assert cluster.elect_leaders("preferred") == {}     # every partition: those needing none are left out


def test_all_partitions_moves_every_one_that_can_move(tmp_path):
    cluster, _ = moved_away(tmp_path)
    results = cluster.elect_leaders()
    assert results and all(error == Errors.NONE for error in results.values())
    assert [cluster.leader_of("t", p) for p in range(3)] == [1, 2, 3]


def test_a_preferred_replica_that_is_down_is_not_available(tmp_path):
    cluster, events = moved_away(tmp_path)
    cluster.kill_broker(1)
    cluster.run_for(20_000)
    before, seen = cluster.store.dump(), len(events)
    assert cluster.elect_leaders("preferred", [("t", 0)]) == {"t-0": Errors.PREFERRED_LEADER_NOT_AVAILABLE}
    assert cluster.store.dump() == before and len(events) == seen


@pytest.mark.parametrize("partitions, election_type, field", [
    ([("nope", 0)], "preferred", "partitions[0]"),
    ([("t", 0), ("t", 3)], "preferred", "partitions[1]"),
    ([("t", 0)], "unclean", "election_type"),
])
def test_bad_input_names_the_field_and_changes_nothing(tmp_path, partitions, election_type, field):
    cluster, events = moved_away(tmp_path)
    before, seen = cluster.store.dump(), len(events)
    with pytest.raises(ClusterError) as caught:
        cluster.elect_leaders(election_type, partitions)
    assert caught.value.field == field
    assert cluster.store.dump() == before and len(events) == seen


def test_auto_leader_rebalance_moves_leadership_back_on_its_own(tmp_path):
    cluster, events = moved_away(tmp_path, {"auto.leader.rebalance.enable": True,
                                            "leader.imbalance.check.interval.seconds": 60})
    cluster.run_for(60_000)
    assert cluster.leader_of("t", 0) == 1
    auto = [e for e in events if e.kind == "leader_elected" and e.reason == "auto leader rebalance"]
    assert [(e.topic, e.partition, e.leader) for e in auto] == [("t", 0, 1)]


def test_auto_leader_rebalance_is_off_by_default_in_the_lab(tmp_path):
    cluster, events = moved_away(tmp_path)
    cluster.run_for(600_000)
    assert cluster.leader_of("t", 0) != 1
    assert not [e for e in events if e.kind == "leader_elected" and e.reason == "auto leader rebalance"]


def test_the_imbalance_must_be_above_the_percentage(tmp_path):
    # broker 1 prefers only t-0 and leads none: 100%; a 100 percentage is never exceeded.
    cluster, _ = moved_away(tmp_path, {"auto.leader.rebalance.enable": True,
                                       "leader.imbalance.check.interval.seconds": 60,
                                       "leader.imbalance.per.broker.percentage": 100})
    cluster.run_for(120_000)
    assert cluster.leader_of("t", 0) != 1
