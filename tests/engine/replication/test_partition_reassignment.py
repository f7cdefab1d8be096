"""kafka-reassign-partitions in ZooKeeper mode, end to end: KIP-455's steps, the data intact, a bad plan
refused naming its field with nothing changed."""
from __future__ import annotations

import json
import os

import pytest

from engine.cluster import Cluster, ClusterError
from engine.common.errors import Errors
from engine.metadata import zk


def make(tmp_path, brokers=5) -> tuple[Cluster, list]:
    events: list = []
    cluster = Cluster(brokers=brokers, data_dir=str(tmp_path), seed=11, on_event=events.append)
    cluster.create_topic("t", partitions=2, replication_factor=3, replica_assignment=[[1, 2, 3], [2, 3, 1]])
    for i in range(30):
        cluster.produce("t", f"k{i}", f"v{i}", partition=i % 2)
    cluster.run_until_idle()
    return cluster, events


def plan(*entries) -> dict:
    return {"version": 1, "partitions": [{"topic": t, "partition": p, "replicas": r} for t, p, r in entries]}


def of(events, kind, **match):
    return [e for e in events if e.kind == kind and all(getattr(e, k) == v for k, v in match.items())]


def values(cluster, partition):
    return [r.value for r in cluster.read("t", partition)]


def test_moving_every_replica_to_new_brokers_keeps_the_data_and_moves_the_leader(tmp_path):
    cluster, events = make(tmp_path)
    before = values(cluster, 0)
    started = cluster.reassign_partitions(plan(("t", 0, [3, 4, 5])))
    assert started["current"]["partitions"][0]["replicas"] == [1, 2, 3] and started["started"] == ["t-0"]
    moving = of(events, "reassignment_started")[0]
    assert (moving.original, moving.target, moving.replicas, moving.adding, moving.removing) == \
        ([1, 2, 3], [3, 4, 5], [3, 4, 5, 1, 2], [4, 5], [1, 2])
    assert cluster.verify_reassignment(plan(("t", 0, [3, 4, 5])))[0]["state"] == "in progress"
    cluster.produce("t", "late", "during the move", partition=0)   # written while the replicas move
    cluster.run_until_idle()
    assert [e.phase for e in of(events, "reassignment_step")] == ["A1-A2", "B3", "B4-B5"]
    assert {e.added[0] for e in of(events, "isr_expanded", topic="t", partition=0)} == {4, 5}
    moved = of(events, "leader_elected", reason="reassignment")[0]
    assert (moved.previous_leader, moved.leader) == (1, 3)      # 1 leaves: the first target replica in the ISR
    state = cluster.partition_state("t", 0)
    assert state["replicas"] == [3, 4, 5] and sorted(state["isr"]) == [3, 4, 5] and state["leader"] == 3
    assert values(cluster, 0) == before + [b"during the move"]
    for broker in (4, 5):
        assert cluster.brokers[broker].partitions[("t", 0)].log_end_offset == len(before) + 1
    for broker in (1, 2):
        assert ("t", 0) not in cluster.brokers[broker].partitions
        assert not os.path.isdir(os.path.join(cluster.brokers[broker].data_dir, "t-0"))
    assert cluster.verify_reassignment(plan(("t", 0, [3, 4, 5])))[0]["message"] == \
        "Reassignment of partition t-0 is completed."
    assert zk.ongoing_reassignments(cluster.store) == {} and not cluster.store.exists(zk.REASSIGN_PARTITIONS_PATH)
    assert cluster.partition_state("t", 1)["replicas"] == [2, 3, 1]    # not in the plan: untouched


def test_a_leader_in_the_target_keeps_leading(tmp_path):
    cluster, events = make(tmp_path)
    cluster.reassign_partitions(plan(("t", 1, [4, 2])), wait=True)
    state = cluster.partition_state("t", 1)
    assert state["replicas"] == [4, 2] and state["leader"] == 2 and sorted(state["isr"]) == [2, 4]
    assert not of(events, "leader_elected", reason="reassignment")
    assert cluster.topics["t"].replication_factor == 3    # partition 0 sets it, as kafka-topics shows it


def test_a_new_replica_that_goes_down_holds_the_move_until_it_returns(tmp_path):
    cluster, events = make(tmp_path)
    cluster.reassign_partitions(plan(("t", 0, [1, 2, 4])))
    cluster.kill_broker(4)
    cluster.run_for(30_000)
    assert ("t", 0) in zk.ongoing_reassignments(cluster.store) and not of(events, "reassignment_completed")
    with pytest.raises(ClusterError) as caught:
        cluster.reassign_partitions(plan(("t", 1, [2, 3])))
    assert caught.value.kafka_name == Errors.REASSIGNMENT_IN_PROGRESS
    cluster.restart_broker(4)
    cluster.run_until_idle()
    assert cluster.partition_state("t", 0)["replicas"] == [1, 2, 4] and of(events, "reassignment_completed")


BAD_PLANS = [
    ("not json", "plan", Errors.INVALID_REQUEST),
    (plan(("t", 0, [1, 2, 9])), "partitions[0].replicas", Errors.INVALID_REPLICA_ASSIGNMENT),
    (plan(("t", 0, [1, 2, 2])), "partitions[0].replicas", Errors.INVALID_REPLICA_ASSIGNMENT),
    (plan(("t", 0, [])), "partitions[0].replicas", Errors.INVALID_REPLICA_ASSIGNMENT),
    (plan(("nope", 0, [1])), "partitions[0].topic", Errors.UNKNOWN_TOPIC_OR_PARTITION),
    (plan(("t", 0, [1]), ("t", 7, [1])), "partitions[1].partition", Errors.UNKNOWN_TOPIC_OR_PARTITION),
    ({"version": 1, "partitions": []}, "partitions", Errors.INVALID_REQUEST),
]


@pytest.mark.parametrize("bad, field, error", BAD_PLANS)
def test_a_bad_plan_names_its_field_and_changes_nothing(tmp_path, bad, field, error):
    cluster, events = make(tmp_path)
    before, seen, now = cluster.store.dump(), len(events), cluster.now_ms
    with pytest.raises(ClusterError) as caught:
        cluster.reassign_partitions(bad if isinstance(bad, dict) else bad)
    assert caught.value.field == field and caught.value.kafka_name == error
    assert field.split(".")[-1] in str(caught.value) or field == "plan"
    assert cluster.store.dump() == before and len(events) == seen and cluster.now_ms == now


def test_a_plan_naming_a_down_broker_is_refused(tmp_path):
    cluster, _ = make(tmp_path)
    cluster.kill_broker(5)
    cluster.run_for(20_000)
    with pytest.raises(ClusterError, match="not alive") as caught:
        cluster.reassign_partitions(json.dumps(plan(("t", 0, [1, 2, 5]))))
    assert caught.value.field == "partitions[0].replicas"
