"""Brokers elect the controller among themselves through the metadata store; topics live in the store."""
from __future__ import annotations

import pytest

from engine import Cluster
from engine.metadata import zk
from engine.node import Node
from engine.protocol import LeaderAndIsrRequest


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(3, str(tmp_path / "lab"), seed=4)
    c.create_topic("t", partitions=3, replication_factor=3)   # every broker hears from the controller
    yield c
    c.close()


def test_exactly_one_broker_holds_the_controller_and_the_epoch_is_a_znode(cluster):
    holders = [b.id for b in cluster.brokers.values() if b.controller is not None]
    assert holders == [cluster.controller_id()] and cluster.controller.broker_id == holders[0]
    assert cluster.store.get_or_none(zk.CONTROLLER_EPOCH_PATH) == {"epoch": 1} and cluster.controller_epoch == 1


def test_the_controller_resigns_when_its_session_expires_and_another_broker_takes_over(cluster):
    old = cluster.controller
    cluster.kill_controller()
    cluster.run_for(cluster.broker_config.zookeeper_session_timeout_ms - 100)
    assert cluster.controller is old and cluster.controller_id() == old.broker_id   # its session is still open
    cluster.run_until_idle()
    assert old.resigned and cluster.brokers[old.broker_id].controller is None
    assert cluster.controller_id() not in (-1, old.broker_id) and cluster.controller_epoch == 2
    assert all(b.controller_epoch_seen == 2 for b in cluster.brokers.values() if b.alive)


def test_a_broker_refuses_leader_and_isr_from_an_older_controller(cluster):
    old = cluster.controller_id()
    cluster.kill_controller()
    cluster.run_until_idle()
    live = next(b for b in cluster.brokers.values() if b.alive)
    client = Node(cluster.world, "controller-impostor")
    answers: list[object] = []
    client.send(live.node, LeaderAndIsrRequest(old, 1, []), answers.append, timeout_ms=30_000)
    while not answers:
        cluster.step()
    assert answers[0].errors == {"*": "STALE_CONTROLLER_EPOCH"}


def test_a_restarted_broker_has_forgotten_the_controller_epoch_until_the_controller_tells_it(cluster):
    cluster.kill_controller()
    cluster.run_until_idle()                                  # epoch 2 now
    follower = next(b for b in cluster.brokers.values() if b.alive and b.controller is None)
    cluster.kill_broker(follower.id)
    cluster.restart_broker(follower.id)
    assert follower.controller_epoch_seen == 0                # in memory only, as Kafka's
    cluster.run_until_idle()
    assert follower.controller_epoch_seen == 2


def test_a_topic_written_to_the_store_is_created_by_the_controller_and_seen_by_the_facade(cluster):
    zk.create_topic(cluster.store, "direct", [[1, 2], [2, 3]], {"retention.ms": 1000}, topic_id="id-1")
    cluster.run_until_idle()
    info = cluster.topics["direct"]
    assert (info.partitions, info.replication_factor, info.config, info.topic_id) == (2, 2, {"retention.ms": 1000},
                                                                                       "id-1")
    assert [cluster.leader_of("direct", p) for p in range(2)] == [1, 2]
    assert cluster.brokers[3].partitions[("direct", 1)].role == "follower"


def test_topics_are_listed_in_the_order_they_were_created(cluster):
    for name in ("zeta", "alpha", "mid"):
        cluster.create_topic(name, partitions=1, replication_factor=1)
    assert list(cluster.topics) == ["t", "zeta", "alpha", "mid"] == zk.topic_names(cluster.store)
    assert cluster.list_topics() == ["alpha", "mid", "t", "zeta"]
    assert cluster.all_partitions()[3:] == [("zeta", 0), ("alpha", 0), ("mid", 0)]
