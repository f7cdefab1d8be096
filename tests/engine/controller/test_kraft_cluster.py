"""A whole cluster in KRaft mode: the quorum, broker registration and fencing, AlterPartition, failover.

Each test builds a real cluster (real segments in tmp_path, the real network model) and checks what
Kafka's KRaft rules say should happen: a broker is fenced broker.session.timeout.ms after its last
heartbeat, leadership moves away from a fenced broker, the active controller is the Raft leader,
a minority of controllers commits nothing, and every voter's metadata log agrees on what committed.
"""
from __future__ import annotations

import os

import pytest

from engine import events as ev
from engine.cluster import Cluster, ClusterError
from engine.common.errors import Errors
from engine.controller import messages as m
from engine.metadata import records as mr
from engine.storage.log import Log


def kraft(tmp_path, brokers=3, seed=1, **config) -> Cluster:
    return Cluster(brokers, str(tmp_path / "lab"), seed=seed, config={"metadata": "kraft", **config})


def committed_values(raft) -> list[bytes]:
    """The metadata record values of a Raft client's log below its high watermark (a metadata record
    starts with its frame version, 1; a LeaderChange control record with its own version, 0)."""
    return [r.value for r in raft.log.records_from(0)
            if r.offset < raft.high_watermark and r.value is not None and r.value[:1] == b"\x01"]


def test_a_new_kraft_cluster_elects_a_controller_and_registers_every_broker(tmp_path):
    cluster = kraft(tmp_path)
    active = cluster.controller
    assert active is not None and cluster.controller_id() == active.node_id in (1, 2, 3)
    assert sorted(cluster.registrations()) == [1, 2, 3]
    # Broker epochs are the offsets of their RegisterBrokerRecords: all different.
    assert len(set(cluster.registrations().values())) == 3
    # The metadata log is real segments in each voter's data dir, holding Kafka's record types.
    for broker in (1, 2, 3):
        path = os.path.join(cluster.data_dir, f"broker-{broker}", "__cluster_metadata-0")
        assert os.path.exists(os.path.join(path, "00000000000000000000.log"))
        assert os.path.exists(os.path.join(path, "quorum-state"))
    types = {type(mr.decode(v)).__name__ for v in committed_values(cluster.brokers[active.node_id].kraft.raft)}
    assert {"FeatureLevelRecord", "RegisterBrokerRecord", "BrokerRegistrationChangeRecord"} <= types
    # ZooKeeper holds nothing in this mode.
    assert cluster.store.dump() == {}


def test_topic_records_then_leaders_and_data_survive_a_leader_kill(tmp_path):
    cluster = kraft(tmp_path)
    cluster.create_topic("t", partitions=1, replication_factor=3, config={"min.insync.replicas": 2})
    state = cluster.partition_state("t", 0)
    assert state["isr"] == state["replicas"] and state["leader"] == state["replicas"][0]
    for i in range(5):
        cluster.produce("t", key=b"k", value=f"v{i}".encode(), acks=-1)
    cluster.run_until_idle()
    leader = cluster.leader_of("t", 0)
    heartbeats: list[int] = []
    cluster.subscribe(lambda e: heartbeats.append(e.arrive_ms) if isinstance(e, ev.MessageSent)
                      and e.api == "BrokerHeartbeat" and e.src == f"broker-{leader}" else None)
    cluster.run_for(2500)                  # at least one heartbeat arrives
    cluster.kill_broker(leader)
    events = cluster.run_for(12000)
    fenced = [e for e in events if isinstance(e, ev.BrokerFenced)]
    assert [e.broker for e in fenced] == [leader]
    # broker.session.timeout.ms after the last heartbeat the controller had: not before, not later
    # (the heartbeat is handled a step after it arrives; the network's delays are a few ms).
    assert max(heartbeats) + 9000 <= fenced[0].time_ms <= max(heartbeats) + 9000 + 10
    state = cluster.partition_state("t", 0)
    assert state["leader"] not in (leader, -1) and leader not in state["isr"] and state["leader_epoch"] == 1
    cluster.run_until_idle()
    assert [r.value for r in cluster.read("t", 0)] == [f"v{i}".encode() for i in range(5)]
    # Back: registered again (a new broker epoch), unfenced, caught up, back in the ISR by AlterPartition.
    cluster.restart_broker(leader)
    cluster.run_until_idle()
    state = cluster.partition_state("t", 0)
    assert sorted(state["isr"]) == [1, 2, 3] and state["partition_epoch"] >= 2
    assert leader in cluster.registrations()


def test_killing_the_active_controller_elects_a_new_raft_leader_in_a_higher_epoch(tmp_path):
    cluster = kraft(tmp_path, seed=4)
    cluster.create_topic("t", partitions=3, replication_factor=3)
    old, epoch = cluster.controller_id(), cluster.controller_epoch
    cluster.kill_controller()
    events = cluster.run_for(16000)       # an election (fetch.timeout.ms, then votes), then 9 s of session
    assert cluster.controller is not None and cluster.controller_id() != old
    assert cluster.controller_epoch > epoch
    assert any(isinstance(e, ev.QuorumControllerActivated) and e.node == cluster.controller_id() for e in events)
    # The new active controller started every broker's session afresh: the dead one is fenced.
    assert old not in cluster.registrations()
    cluster.produce("t", key=b"a", value=b"after", acks=-1)
    cluster.run_until_idle()
    assert any(r.value == b"after" for p in range(3) for r in cluster.read("t", p))
    # The voters agree on everything that committed.
    alive = [b.kraft.raft for b in cluster.brokers.values() if b.alive]
    shortest = min(r.high_watermark for r in alive)
    prefixes = {tuple(committed_values(r)[:shortest]) for r in alive}
    assert len(prefixes) == 1


def test_a_minority_of_controllers_commits_nothing(tmp_path):
    cluster = kraft(tmp_path, **{"controller.mode": "dedicated", "controller.count": 3})
    assert sorted(cluster.controller_nodes) == [101, 102, 103]
    survivor = cluster.controller_id()
    for node in sorted(cluster.controller_nodes):
        if node != survivor:
            cluster.kill_controller_node(node)
    cluster.run_for(6000)      # past 1.5 x controller.quorum.fetch.timeout.ms: the lone leader resigns
    assert cluster.controller is None
    with pytest.raises(ClusterError) as raised:
        cluster.create_topic("t", partitions=1, replication_factor=3)
    assert raised.value.kafka_name == Errors.NOT_CONTROLLER
    cluster.restart_controller_node(min(n for n in cluster.controller_nodes if n != survivor))
    cluster.run_until_idle()
    assert cluster.controller is not None
    cluster.create_topic("t", partitions=1, replication_factor=3)
    assert cluster.leader_of("t", 0) in (1, 2, 3)


def test_a_broker_cut_off_from_the_quorum_is_fenced_and_comes_back(tmp_path):
    cluster = kraft(tmp_path, brokers=4, **{"controller.mode": "dedicated", "controller.count": 1})
    cluster.create_topic("t", partitions=1, replication_factor=3, replica_assignment=[[4, 2, 3]])
    cluster.partition_network(4, "controller-101")
    events = cluster.run_for(12000)
    assert [e.broker for e in events if isinstance(e, ev.BrokerFenced)] == [4]
    assert cluster.leader_of("t", 0) == 2
    cluster.heal_network(4, "controller-101")
    cluster.run_until_idle()
    assert 4 in cluster.registrations() and sorted(cluster.partition_state("t", 0)["isr"]) == [2, 3, 4]


def alter(cluster, **change) -> m.AlterPartitionResponse:
    """An AlterPartition request to the active controller, as partition 0's leader would send it."""
    active = cluster.controller
    state = cluster.partition_state("t", 0)
    leader = state["leader"]
    request = m.AlterPartitionRequest(leader, cluster.brokers[leader].kraft.broker_epoch, "t",
                                      cluster.topics["t"].topic_id, 0, state["leader_epoch"],
                                      change.pop("new_isr", state["isr"][:2]), state["partition_epoch"])
    for key, value in change.items():
        setattr(request, key, value)
    answers: list = []
    active._handle_alter_partition("test", request, lambda answer, summary=None: answers.append(answer))
    cluster.run_until_idle()
    return answers[0]


def test_alter_partition_checks_the_epochs_and_the_new_members(tmp_path):
    cluster = kraft(tmp_path, brokers=4)
    cluster.create_topic("t", partitions=1, replication_factor=3, replica_assignment=[[1, 2, 3]])
    state = cluster.partition_state("t", 0)
    assert alter(cluster, partition_epoch=state["partition_epoch"] - 1).error == Errors.INVALID_UPDATE_VERSION
    assert alter(cluster, leader_epoch=state["leader_epoch"] + 1).error == Errors.FENCED_LEADER_EPOCH
    assert alter(cluster, new_isr=[1, 2, 4]).error == Errors.INELIGIBLE_REPLICA     # 4 holds no replica
    answer = alter(cluster, new_isr=[1, 2])
    assert answer.error == Errors.NONE and answer.isr == [1, 2]
    assert answer.leader_epoch == state["leader_epoch"]               # an ISR change alone keeps the epoch
    assert answer.partition_epoch == state["partition_epoch"] + 1


def test_the_same_seed_gives_the_same_events_and_metadata_bytes(tmp_path):
    def run(path):
        seen: list = []
        cluster = Cluster(3, str(path), seed=9, config={"metadata": "kraft"}, on_event=seen.append)
        cluster.create_topic("t", partitions=2, replication_factor=3)
        cluster.kill_controller()
        cluster.run_for(15000)
        log = os.path.join(cluster.data_dir, "broker-2", "__cluster_metadata-0", "00000000000000000000.log")
        with open(log, "rb") as f:
            data = f.read()
        return [(e.kind, e.time_ms) for e in seen], data
    assert run(tmp_path / "a") == run(tmp_path / "b")


@pytest.mark.parametrize(("config", "field"), [
    ({"metadata": "etcd"}, "metadata"),
    ({"metadata": "kraft", "controller.mode": "solo"}, "controller.mode"),
    ({"metadata": "kraft", "controller.count": 2}, "controller.count"),
    ({"metadata": "kraft", "controller.quorum.election.timeout.ms": 0}, "controller.quorum.election.timeout.ms"),
])
def test_bad_metadata_settings_are_refused_naming_the_field(tmp_path, config, field):
    with pytest.raises(Exception) as raised:
        Cluster(3, str(tmp_path / "lab"), config=config)
    assert field in str(raised.value)
    assert not os.path.exists(tmp_path / "lab" / "broker-1")


def test_a_metadata_log_reads_back_as_kafka_records(tmp_path):
    cluster = kraft(tmp_path, brokers=1)
    cluster.create_topic("t", partitions=2, replication_factor=1)
    path = os.path.join(cluster.data_dir, "broker-1", "__cluster_metadata-0")
    described = [mr.describe(mr.decode(r.value)) for r in Log(path).records_from(0)
                 if r.value is not None and r.value[:1] == b"\x01"]
    kinds = [d["type"] for d in described]
    assert kinds.count("PARTITION_RECORD") == 2 and "TOPIC_RECORD" in kinds
