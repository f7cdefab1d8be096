"""The Cluster facade: topics, produce/read, faults, controller, events."""
from __future__ import annotations

import json
import os

import pytest

from engine import Cluster
from engine.cluster import ClusterError
from engine.inspect.cluster import cluster_state


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(3, str(tmp_path / "lab"), seed=42)
    yield c
    c.close()


def test_a_new_cluster_elects_one_controller(cluster):
    controllers = [b for b in cluster_state(cluster)["brokers"] if b["controller"]]
    assert len(controllers) == 1 and cluster.controller_id() == controllers[0]["id"]


def test_replicas_spread_over_brokers_and_any_partition_count_is_allowed(cluster):
    topic = cluster.create_topic("uneven", partitions=5, replication_factor=2)
    leaders = [p["leader"] for p in topic["partitions"]]
    assert sorted(set(leaders)) == [1, 2, 3]
    assert sorted(leaders.count(b) for b in (1, 2, 3)) == [1, 2, 2]  # 5 on 3 brokers: uneven, and fine
    for p in topic["partitions"]:
        assert len(set(p["replicas"])) == 2 and p["leader"] == p["replicas"][0] and p["isr"] == p["replicas"]


def test_replication_factor_above_the_live_brokers_fails(cluster):
    with pytest.raises(ClusterError, match="larger than available brokers: 3") as error:
        cluster.create_topic("t", 1, 4)
    assert error.value.kafka_name == "INVALID_REPLICATION_FACTOR"
    cluster.kill_broker(3)
    cluster.run_for(20000)
    with pytest.raises(ClusterError, match="larger than available brokers: 2"):
        cluster.create_topic("t", 1, 3)


@pytest.mark.parametrize("name, message", [("", "empty"), ("bad name", "illegal"), ("x" * 250, "longer than 249"),
                                           ("..", "cannot be")])
def test_illegal_topic_names_are_refused(cluster, name, message):
    with pytest.raises(ClusterError, match=message) as error:
        cluster.create_topic(name)
    assert error.value.kafka_name == "INVALID_TOPIC_EXCEPTION"


def test_names_that_collide_on_dot_and_underscore_are_refused_and_warned_about(cluster):
    events = []
    cluster.subscribe(events.append)
    cluster.create_topic("a.b")
    created = next(e for e in events if e.kind == "topic_created")
    assert created.warnings and "collide" in created.warnings[0]
    with pytest.raises(ClusterError, match="collides with existing topic: a.b"):
        cluster.create_topic("a_b")
    with pytest.raises(ClusterError, match="already exists"):
        cluster.create_topic("a.b")


def test_consumers_see_only_records_below_the_high_watermark(cluster):
    cluster.create_topic("t", 1, 3, replica_assignment=[[1, 2, 3]])
    cluster.pause_fetcher(2)
    cluster.pause_fetcher(3)
    cluster.produce("t", None, "uncommitted", acks=1)
    cluster.run_for(100)
    leader = cluster.brokers[1].partitions[("t", 0)]
    assert leader.log_end_offset == 1 and leader.high_watermark == 0
    assert cluster.read("t", 0) == []
    cluster.resume_fetcher(2)
    cluster.resume_fetcher(3)
    cluster.run_until_idle()
    assert [r.value for r in cluster.read("t", 0)] == [b"uncommitted"]


def test_killing_the_leader_elects_the_first_live_isr_replica_in_assignment_order(cluster):
    cluster.create_topic("t", 1, 3, replica_assignment=[[2, 3, 1]])
    cluster.produce("t", "k", "v", acks="all")
    cluster.run_until_idle()
    events = cluster.kill_broker(2)
    assert [e.kind for e in events] == ["broker_crashed"]
    events = cluster.run_for(cluster.broker_config.zookeeper_session_timeout_ms + 100)
    elected = [e for e in events if e.kind == "leader_elected"]
    assert elected[-1].leader == 3 and elected[-1].leader_epoch == 1 and elected[-1].previous_leader == 2
    assert cluster.describe_topic("t")["partitions"][0]["isr"] == [3, 1]


def test_with_no_eligible_replica_the_partition_goes_offline_and_produce_fails_clearly(cluster):
    cluster.create_topic("t", 1, 1, replica_assignment=[[2]])
    cluster.kill_broker(2)
    events = cluster.run_for(20000)
    assert any(e.kind == "partition_offline" for e in events)
    record = cluster.produce("t", None, "x")
    assert record.acked is False and record.error == "LEADER_NOT_AVAILABLE"
    with pytest.raises(ClusterError, match="offline"):
        cluster.read("t", 0)
    cluster.restart_broker(2)
    events = cluster.run_until_idle()
    back = [e for e in events if e.kind == "leader_elected"]
    assert back and back[-1].leader == 2 and back[-1].reason == "partition back online"


def test_controller_failover_moves_the_controller_and_keeps_electing_leaders(cluster):
    cluster.create_topic("t", 3, 3)
    old = cluster.controller_id()
    cluster.kill_controller()
    events = cluster.run_for(20000)
    new = cluster.controller_id()
    assert new not in (-1, old)
    assert any(e.kind == "controller_elected" and e.broker == new for e in events)
    for p in cluster.describe_topic("t")["partitions"]:
        assert p["leader"] != old and p["leader"] in (1, 2, 3)
    assert cluster.produce("t", None, "after", partition=0).request_id
    cluster.run_until_idle()
    assert [r.value for r in cluster.read("t", 0)] == [b"after"]


def test_min_insync_replicas_refuses_acks_all_when_the_isr_is_too_small(tmp_path):
    c = Cluster(2, str(tmp_path / "lab"), seed=1, config={"min.insync.replicas": 2,
                                                          "replica.lag.time.max.ms": 1000})
    c.create_topic("t", 1, 2, replica_assignment=[[1, 2]])
    c.pause_fetcher(2)
    c.run_for(3000)
    assert c.describe_topic("t")["partitions"][0]["isr"] == [1]
    refused = c.produce("t", None, "x", acks="all")
    accepted = c.produce("t", None, "y", acks=1)
    c.run_for(100)
    assert refused.error == "NOT_ENOUGH_REPLICAS" and accepted.acked
    assert c.brokers[1].partitions[("t", 0)].high_watermark == 0  # frozen below min.insync.replicas
    c.close()


def test_a_power_loss_drops_unflushed_records_a_process_crash_does_not(tmp_path):
    c = Cluster(1, str(tmp_path / "lab"), seed=1)
    c.create_topic("t", 1, 1)
    c.produce("t", None, "flushed")
    c.run_until_idle()
    c.flush_broker(1)
    c.produce("t", None, "in page cache")
    c.run_until_idle()
    c.kill_broker(1, "process")
    c.restart_broker(1)
    c.run_until_idle()
    assert c.brokers[1].partitions[("t", 0)].log_end_offset == 2
    c.kill_broker(1, "power")
    c.restart_broker(1)
    c.run_until_idle()
    assert c.brokers[1].partitions[("t", 0)].log_end_offset == 1
    c.close()


def test_brokers_keep_kafka_s_files_in_their_own_data_dirs(cluster):
    cluster.create_topic("t", 2, 2)
    cluster.produce("t", None, "x", partition=0)
    cluster.run_for(6000)  # past the 5 s HW checkpoint
    for broker in cluster.brokers.values():
        files = os.listdir(broker.data_dir)
        assert "replication-offset-checkpoint" in files
        assert any(name.startswith("t-") for name in files)
        with open(os.path.join(broker.data_dir, "replication-offset-checkpoint")) as f:
            lines = f.read().splitlines()
        assert lines[0] == "0" and int(lines[1]) == len(lines) - 2
    leader = cluster.leader_of("t", 0)
    partition_dir = os.path.join(cluster.brokers[leader].data_dir, "t-0")
    assert {"00000000000000000000.log", "00000000000000000000.index", "00000000000000000000.timeindex",
            "leader-epoch-checkpoint"} <= set(os.listdir(partition_dir))


def test_every_event_is_json_serialisable_and_numbered_in_order(cluster):
    events = []
    cluster.subscribe(events.append)
    cluster.create_topic("t", 1, 3)
    cluster.produce("t", "k", "v")
    cluster.run_until_idle()
    cluster.kill_broker(cluster.leader_of("t", 0))
    cluster.run_for(20000)
    kinds = {e.kind for e in events}
    assert {"topic_created", "leader_elected", "records_appended", "message_sent", "high_watermark_advanced",
            "broker_crashed", "produce_acknowledged", "leader_and_isr_applied"} <= kinds
    assert [e.seq for e in events] == sorted(e.seq for e in events)
    for event in events:
        json.dumps(event.to_dict())


def test_step_runs_one_action_and_returns_only_the_events_it_caused(cluster):
    cluster.create_topic("t", 1, 3, replica_assignment=[[1, 2, 3]])
    cluster.run_until_idle()
    cluster.produce("t", None, "x", acks=1)  # its "message_sent" went to subscribers, not to step()
    seen = []
    for _ in range(10):
        before = cluster.scheduler.steps
        events = cluster.step()
        assert cluster.scheduler.steps == before + 1
        assert all(e.time_ms == cluster.now_ms for e in events)
        seen += [e.kind for e in events]
    assert "records_appended" in seen and "produce_acknowledged" in seen


def test_bad_commands_fail_clearly_and_leave_the_cluster_working(cluster):
    cluster.create_topic("t", 1, 3)
    with pytest.raises(ClusterError, match="no broker 7"):
        cluster.kill_broker(7)
    with pytest.raises(ClusterError, match="does not exist"):
        cluster.produce("nope", None, "x")
    with pytest.raises(ClusterError, match="acks must be"):
        cluster.produce("t", None, "x", acks=2)
    with pytest.raises(ClusterError, match="Partition 5"):
        cluster.produce("t", None, "x", partition=5)
    with pytest.raises(ClusterError, match="Unknown topic config"):
        cluster.create_topic("u", config={"segmnt.bytes": 1})
    with pytest.raises(ClusterError, match="1 to 9 brokers"):
        Cluster(10, "x")
    cluster.produce("t", None, "still fine")
    cluster.run_until_idle()
    assert [r.value for r in cluster.read("t", 0)] == [b"still fine"]


def test_a_record_over_max_message_bytes_is_refused_by_the_leader(cluster):
    cluster.create_topic("t", 1, 1, config={"max.message.bytes": 200})
    record = cluster.produce("t", None, "x" * 500)
    cluster.run_until_idle()
    assert record.error == "MESSAGE_TOO_LARGE"


def test_a_cluster_reopened_on_its_data_dir_recovers_its_logs(tmp_path):
    c = Cluster(1, str(tmp_path / "lab"), seed=1)
    c.create_topic("t", 1, 1)
    c.produce("t", None, "kept")
    c.run_until_idle()
    broker = c.brokers[1]
    broker.crash("process")
    broker.start(restarted=True)
    c.run_until_idle()
    assert [r.value for r in c.read("t", 0)] == [b"kept"]


def test_adding_partitions_creates_and_leads_them_and_keeps_the_old_ones(cluster):
    cluster.create_topic("t", 2, 2)
    before = cluster.describe_topic("t")["partitions"]
    after = cluster.add_partitions("t", 5)["partitions"]
    assert after[:2] == before and len(after) == 5
    for p in after[2:]:
        assert p["leader"] == p["replicas"][0] and len(p["replicas"]) == 2
    cluster.produce("t", None, "x", partition=4)
    cluster.run_until_idle()
    assert [r.value for r in cluster.read("t", 4)] == [b"x"]
    with pytest.raises(ClusterError, match="higher than or equal"):
        cluster.add_partitions("t", 3)
