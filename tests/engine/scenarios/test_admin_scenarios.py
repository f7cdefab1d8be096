"""The built-in scenarios of topic deletion, partition reassignment and preferred leader election, with
the outcome each exists to show."""
from __future__ import annotations

import os

from engine.scenarios import load_scenario, run_scenario


def run(name, tmp_path):
    events: list = []
    cluster, result = run_scenario(load_scenario(name), str(tmp_path / name), trace=events.append)
    return cluster, result, events


def of(events, kind, **match):
    return [e for e in events if e.kind == kind and all(getattr(e, k) == v for k, v in match.items())]


def test_topic_deletion_waits_for_the_down_broker_then_frees_the_name(tmp_path):
    cluster, result, events = run("topic-deletion", tmp_path)
    started = of(events, "topic_deletion_started")[0]
    assert started.ineligible == [3]
    deleted = of(events, "topic_deleted")[0]
    renamed_by_3 = [e for e in of(events, "replica_deleted") if e.broker == 3]
    assert len(renamed_by_3) == 2 and all(e.seq < deleted.seq for e in renamed_by_3)
    assert len(of(events, "deleted_log_removed")) == 6
    for broker in cluster.brokers.values():
        assert sorted(os.listdir(broker.data_dir)) == sorted(n for n in os.listdir(broker.data_dir)
                                                            if not n.endswith("-delete"))
    new_t = [p for p in result["partitions"] if p["topic"] == "t"]
    assert len(new_t) == 1 and [r["value"] for r in new_t[0]["replica_states"][str(new_t[0]["leader"])]["records"]] \
        == ["fresh"]
    cluster.close()


def test_partition_reassignment_moves_t0_to_brokers_3_4_5(tmp_path):
    cluster, result, events = run("partition-reassignment", tmp_path)
    p = next(x for x in result["partitions"] if x["topic"] == "t")
    assert p["replicas"] == [3, 4, 5] and sorted(p["isr"]) == [3, 4, 5] and p["leader"] == 3
    assert [e.phase for e in of(events, "reassignment_step")] == ["A1-A2", "B3", "B4-B5"]
    assert {e.broker for e in of(events, "replica_deleted")} == {1, 2}
    expected = ["m1", "m2", "m3", "m4", "m5", "m6", "m7"]
    for broker in (3, 4, 5):
        assert [r["value"] for r in p["replica_states"][str(broker)]["records"]] == expected
    assert all(r["acked"] for r in result["produced"])
    cluster.close()


def test_preferred_leader_election_by_hand_then_by_the_controller(tmp_path):
    cluster, result, events = run("preferred-leader-election", tmp_path)
    by_hand = of(events, "leader_elected", reason="preferred replica election")
    auto = of(events, "leader_elected", reason="auto leader rebalance")
    assert [(e.partition, e.leader) for e in by_hand] == [(0, 1)]
    assert [(e.partition, e.leader) for e in auto] == [(1, 2)]
    assert [p["leader"] for p in sorted(result["partitions"], key=lambda p: p["partition"]) if p["topic"] == "t"] \
        == [1, 2, 3]
    cluster.close()
