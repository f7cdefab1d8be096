"""Topic deletion, partition reassignment and preferred leader election in KRaft mode.

The same commands as in ZooKeeper mode (tests/engine/replication/), carried by metadata records:
one RemoveTopicRecord, PartitionChangeRecords with adding/removing replicas, PartitionChangeRecords
that move leadership back to the preferred replica.
"""
from __future__ import annotations

import os

import pytest

from engine import events as ev
from engine.cluster import Cluster, ClusterError
from engine.common.errors import Errors


def kraft(tmp_path, brokers=3, **config) -> Cluster:
    return Cluster(brokers, str(tmp_path / "lab"), seed=5, config={"metadata": "kraft", **config})


def test_deleting_a_topic_writes_one_record_and_every_broker_deletes_its_replicas(tmp_path):
    cluster = kraft(tmp_path)
    cluster.create_topic("t", partitions=2, replication_factor=3)
    cluster.produce("t", key=b"k", value=b"v", partition=0, acks=-1)
    cluster.run_until_idle()
    events: list = []
    cluster.subscribe(events.append)
    status = cluster.delete_topic("t")
    assert status["deleted"] and "t" not in cluster.topics
    assert [e.partitions for e in events if isinstance(e, ev.TopicDeleted)] == [2]
    for broker in cluster.brokers.values():
        assert not [k for k in broker.partitions if k[0] == "t"]
        names = os.listdir(broker.data_dir)
        assert "t-0" not in names and any(n.startswith("t-0.") and n.endswith("-delete") for n in names)
    cluster.run_for(61_000)      # log.segment.delete.delay.ms
    for broker in cluster.brokers.values():
        assert not [n for n in os.listdir(broker.data_dir) if n.startswith("t-")]
    # the name can be used again: a new topic id, empty partitions
    cluster.create_topic("t", partitions=1, replication_factor=3)
    assert cluster.read("t", 0) == []


def test_a_down_broker_deletes_its_replica_when_it_comes_back(tmp_path):
    cluster = kraft(tmp_path, brokers=4, **{"controller.mode": "dedicated", "controller.count": 1})
    cluster.create_topic("t", partitions=1, replication_factor=3, replica_assignment=[[1, 2, 4]])
    cluster.run_until_idle()
    cluster.kill_broker(4)
    assert cluster.delete_topic("t")["deleted"]
    assert "t-0" in os.listdir(cluster.brokers[4].data_dir)
    cluster.restart_broker(4)
    cluster.run_until_idle()
    assert "t-0" not in os.listdir(cluster.brokers[4].data_dir)


def test_deleting_an_internal_topic_is_refused_naming_it(tmp_path):
    cluster = kraft(tmp_path)
    cluster.ensure_offsets_topic()
    cluster.run_until_idle()
    with pytest.raises(ClusterError) as raised:
        cluster.delete_topic("__consumer_offsets")
    assert raised.value.kafka_name == Errors.INVALID_TOPIC_EXCEPTION and "__consumer_offsets" in str(raised.value)
    assert "__consumer_offsets" in cluster.topics


def test_a_reassignment_adds_catches_up_moves_leadership_and_removes(tmp_path):
    cluster = kraft(tmp_path, brokers=5, **{"controller.mode": "dedicated", "controller.count": 1})
    cluster.create_topic("t", partitions=1, replication_factor=3, replica_assignment=[[1, 2, 3]])
    for i in range(10):
        cluster.produce("t", key=b"k", value=f"v{i}".encode(), acks=-1)
    cluster.run_until_idle()
    events: list = []
    cluster.subscribe(events.append)
    answer = cluster.reassign_partitions({"version": 1, "partitions": [{"topic": "t", "partition": 0,
                                                                        "replicas": [3, 4, 5]}]})
    assert answer["current"]["partitions"][0]["replicas"] == [1, 2, 3]
    started = next(e for e in events if isinstance(e, ev.ReassignmentStarted))
    assert (started.replicas, started.adding, started.removing) == ([3, 4, 5, 1, 2], [4, 5], [1, 2])
    cluster.run_until_idle()
    state = cluster.partition_state("t", 0)
    assert state["replicas"] == [3, 4, 5] and sorted(state["isr"]) == [3, 4, 5] and state["leader"] == 3
    assert state["adding_replicas"] == state["removing_replicas"] == []
    assert any(isinstance(e, ev.ReassignmentCompleted) for e in events)
    assert [r.value for r in cluster.read("t", 0)] == [f"v{i}".encode() for i in range(10)]
    for gone in (1, 2):
        assert ("t", 0) not in cluster.brokers[gone].partitions
    plan = {"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [3, 4, 5]}]}
    assert cluster.verify_reassignment(plan)[0]["state"] == "completed"


def test_a_reassignment_naming_a_missing_broker_changes_nothing(tmp_path):
    cluster = kraft(tmp_path)
    cluster.create_topic("t", partitions=1, replication_factor=3)
    before = cluster.partition_state("t", 0)
    with pytest.raises(ClusterError) as raised:
        cluster.reassign_partitions({"version": 1,
                                     "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 9, 2]}]})
    assert "partitions[0].replicas" in str(raised.value)
    cluster.run_until_idle()
    assert cluster.partition_state("t", 0) == before


def test_preferred_leader_election_moves_leadership_back(tmp_path):
    cluster = kraft(tmp_path, brokers=4, **{"controller.mode": "dedicated", "controller.count": 1})
    cluster.create_topic("t", partitions=1, replication_factor=3, replica_assignment=[[1, 2, 3]])
    cluster.kill_broker(1)
    cluster.run_for(12_000)
    assert cluster.leader_of("t", 0) == 2
    cluster.restart_broker(1)
    cluster.run_until_idle()
    assert cluster.leader_of("t", 0) == 2 and 1 in cluster.partition_state("t", 0)["isr"]
    results = cluster.elect_leaders("preferred", [("t", 0)])
    assert results == {"t-0": "NONE"} and cluster.leader_of("t", 0) == 1
    assert cluster.elect_leaders("preferred", [("t", 0)]) == {"t-0": "ELECTION_NOT_NEEDED"}


def test_auto_leader_rebalance_moves_leadership_back_by_itself(tmp_path):
    cluster = kraft(tmp_path, brokers=4, **{"controller.mode": "dedicated", "controller.count": 1,
                                            "auto.leader.rebalance.enable": True,
                                            "leader.imbalance.check.interval.seconds": 30})
    cluster.create_topic("t", partitions=1, replication_factor=3, replica_assignment=[[1, 2, 3]])
    cluster.kill_broker(1)
    cluster.run_for(12_000)
    cluster.restart_broker(1)
    cluster.run_until_idle()
    events = cluster.run_for(31_000)
    moved = [e for e in events if isinstance(e, ev.LeaderElected) and e.reason == "auto leader rebalance"]
    assert [(e.leader, e.previous_leader) for e in moved] == [(1, 2)]
    assert cluster.leader_of("t", 0) == 1
