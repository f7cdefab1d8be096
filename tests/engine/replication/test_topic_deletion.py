"""kafka-topics --delete in ZooKeeper mode, end to end: StopReplica (delete) to every replica, the
partition directories renamed `-delete` and removed log.segment.delete.delay.ms later, the znodes gone."""
from __future__ import annotations

import os
import re

import pytest

from engine.cluster import Cluster, ClusterError
from engine.common.errors import Errors
from engine.metadata import zk
from engine.protocol import FetchPartition, FetchRequest, MetadataRequest, ProduceRequest
from engine.storage import record_batch as rb

DELETED = re.compile(r"^t-(\d+)\.[0-9a-f]{32}-delete$")


def make(tmp_path, brokers=3, config=None) -> tuple[Cluster, list]:
    events: list = []
    cluster = Cluster(brokers=brokers, data_dir=str(tmp_path), seed=5, config=config, on_event=events.append)
    return cluster, events


def with_topic(tmp_path, **kw) -> tuple[Cluster, list]:
    cluster, events = make(tmp_path, **kw)
    cluster.create_topic("t", partitions=2, replication_factor=3)
    for i in range(10):
        cluster.produce("t", f"k{i}", f"v{i}")
    cluster.run_until_idle()
    return cluster, events


def dirs(cluster: Cluster, broker: int) -> list[str]:
    return sorted(n for n in os.listdir(cluster.brokers[broker].data_dir)
                  if os.path.isdir(os.path.join(cluster.brokers[broker].data_dir, n)))


def answer(broker, handler, request):
    out = []
    handler(broker, "test", request, lambda body, summary=None, **kw: out.append(body))
    return out[0]


def kinds(events, kind, **match):
    return [e for e in events if e.kind == kind and all(getattr(e, k) == v for k, v in match.items())]


def test_deleting_a_topic_renames_its_directories_then_removes_them(tmp_path):
    cluster, events = with_topic(tmp_path)
    status = cluster.delete_topic("t")
    assert status == {"topic": "t", "deleted": True, "waiting_for_brokers": []}
    assert [e.kind for e in events if e.kind.startswith("topic_del")] == ["topic_deletion_started", "topic_deleted"]
    assert len(kinds(events, "replica_deleted")) == 6
    for broker in cluster.brokers:
        assert sorted(DELETED.match(n).group(1) for n in dirs(cluster, broker)) == ["0", "1"]
        assert not cluster.brokers[broker].partitions
    assert "t" not in cluster.topics and not zk.topic_exists(cluster.store, "t")
    assert not [p for p in cluster.store.dump() if "/t" in p and p.startswith(("/brokers/topics", "/config", "/admin"))]
    cluster.run_for(59_000)
    assert all(dirs(cluster, b) for b in cluster.brokers)      # still there before the delay
    cluster.run_for(1_000)
    assert all(dirs(cluster, b) == [] for b in cluster.brokers)
    assert len(kinds(events, "deleted_log_removed")) == 6


def test_the_same_name_can_be_created_again_and_starts_empty(tmp_path):
    cluster, _ = with_topic(tmp_path)
    old_id = cluster.topics["t"].topic_id
    cluster.delete_topic("t")
    cluster.create_topic("t", partitions=1, replication_factor=3)
    cluster.produce("t", "k", "fresh", partition=0)
    cluster.run_until_idle()
    assert [r.value for r in cluster.read("t", 0)] == [b"fresh"]
    assert cluster.topics["t"].topic_id != old_id
    assert all("t-0" in dirs(cluster, b) for b in cluster.brokers)


def test_clients_of_a_deleted_topic_get_unknown_topic_or_partition(tmp_path):
    cluster, _ = with_topic(tmp_path)
    leader = cluster.brokers[cluster.leader_of("t", 0)]
    cluster.delete_topic("t")
    with pytest.raises(ClusterError) as caught:
        cluster.produce("t", "k", "v")
    assert caught.value.kafka_name == Errors.UNKNOWN_TOPIC_OR_PARTITION
    meta = answer(leader, type(leader)._handle_metadata, MetadataRequest(["t"]))
    assert meta.topics[0].error == Errors.UNKNOWN_TOPIC_OR_PARTITION
    produce = answer(leader, type(leader)._handle_produce,
                     ProduceRequest(1, 1, 1000, "t", 0, rb.encode_batch([(b"k", b"v")], base_timestamp=0)))
    assert produce.error == Errors.UNKNOWN_TOPIC_OR_PARTITION
    fetch = answer(leader, type(leader)._handle_fetch,
                   FetchRequest(-1, 0, 1, 1 << 20, [FetchPartition("t", 0, 0, -1)]))
    assert fetch.partitions[0].error == Errors.UNKNOWN_TOPIC_OR_PARTITION


def test_deletion_waits_for_a_replica_on_a_down_broker(tmp_path):
    cluster, events = with_topic(tmp_path)
    cluster.kill_broker(3)
    cluster.run_for(20_000)                         # its session expired
    status = cluster.delete_topic("t")
    assert status["deleted"] is False and status["waiting_for_brokers"] == [3]
    assert kinds(events, "topic_deletion_started")[0].ineligible == [3]
    assert all(DELETED.match(n) for b in (1, 2) for n in dirs(cluster, b))   # live replicas deleted already
    assert sorted(dirs(cluster, 3)) == ["t-0", "t-1"]                          # the down one is untouched
    leader = cluster.brokers[1]
    assert answer(leader, type(leader)._handle_metadata, MetadataRequest(["t"])).topics[0].error == \
        Errors.UNKNOWN_TOPIC_OR_PARTITION                                        # gone for clients already
    cluster.run_for(30_000)
    assert zk.topic_exists(cluster.store, "t") and not kinds(events, "topic_deleted")
    cluster.restart_broker(3)
    cluster.run_until_idle()
    assert kinds(events, "topic_deleted") and not zk.topic_exists(cluster.store, "t")
    assert all(DELETED.match(n) for n in dirs(cluster, 3)) and len(dirs(cluster, 3)) == 2
    assert not kinds(events, "leader_elected", topic="t", reason="partition back online")


def test_internal_topics_cannot_be_deleted_and_nothing_changes(tmp_path):
    cluster, events = make(tmp_path)
    cluster.ensure_offsets_topic()
    cluster.run_until_idle()
    before, seen = cluster.store.dump(), len(events)
    with pytest.raises(ClusterError, match="__consumer_offsets is a kafka internal topic") as caught:
        cluster.delete_topic("__consumer_offsets")
    assert caught.value.kafka_name == Errors.INVALID_TOPIC_EXCEPTION and caught.value.field == "topic"
    cluster.run_until_idle()
    assert cluster.store.dump() == before and len(events) == seen


def test_delete_topic_enable_false_refuses_and_changes_nothing(tmp_path):
    cluster, events = with_topic(tmp_path, config={"delete.topic.enable": False})
    before, seen = cluster.store.dump(), len(events)
    with pytest.raises(ClusterError, match="delete.topic.enable=false") as caught:
        cluster.delete_topic("t")
    assert caught.value.kafka_name == Errors.TOPIC_DELETION_DISABLED
    assert cluster.store.dump() == before and len(events) == seen


def test_a_controller_with_delete_topic_disabled_drops_a_mark_it_finds(tmp_path):
    cluster, events = with_topic(tmp_path, config={"delete.topic.enable": "false"})
    zk.mark_topic_for_deletion(cluster.store, "t")      # written by another tool
    cluster.run_until_idle()
    assert not zk.is_marked_for_deletion(cluster.store, "t") and "t" in cluster.topics
    assert not kinds(events, "topic_deletion_started")


def test_an_unknown_topic_cannot_be_deleted(tmp_path):
    cluster, _ = make(tmp_path)
    with pytest.raises(ClusterError) as caught:
        cluster.delete_topic("nope")
    assert caught.value.kafka_name == Errors.UNKNOWN_TOPIC_OR_PARTITION


def test_a_new_controller_finishes_a_deletion_its_predecessor_left(tmp_path):
    cluster, events = with_topic(tmp_path)
    cluster.kill_broker(3)
    cluster.run_for(20_000)
    cluster.delete_topic("t")
    old_controller = cluster.controller_id()
    cluster.kill_controller()
    cluster.run_for(20_000)                              # a new controller takes over
    assert kinds(events, "topic_deletion_started")[-1].ineligible == sorted([old_controller, 3])
    cluster.restart_broker(3)
    cluster.run_until_idle()
    assert zk.topic_exists(cluster.store, "t")           # the old controller's replicas are still on its disk
    cluster.restart_broker(old_controller)
    cluster.run_until_idle()
    assert not zk.topic_exists(cluster.store, "t") and kinds(events, "topic_deleted")
