"""engine/metadata/zk.py: Kafka's znodes, read and written the way ZooKeeper-mode Kafka does."""
from __future__ import annotations

import pytest

from engine.metadata import zk
from engine.metadata.store import MetadataStore, NodeExistsError
from engine.metadata.view import Topics, ZkMetadata
from engine.sim import Scheduler


@pytest.fixture
def store() -> MetadataStore:
    return MetadataStore(Scheduler())


def test_a_topic_is_written_config_first_then_its_assignment_with_its_id(store):
    written: list[str] = []
    store.watch("/", lambda path: written.append(path), at_once=True)
    zk.create_topic(store, "t", [[1, 2], [2, 3]], {"retention.ms": 5}, "abc")
    assert written == ["/config/topics/t", "/brokers/topics/t"]
    assert zk.read_topic(store, "t") == zk.TopicInfo("t", 2, 2, {"retention.ms": 5}, "abc")
    with pytest.raises(NodeExistsError):
        zk.create_topic(store, "t", [[1]], {}, "other")


def test_added_partitions_extend_the_assignment(store):
    zk.create_topic(store, "t", [[1, 2]], {}, "abc")
    zk.add_partitions(store, "t", [[2, 3], [3, 1]])
    assert zk.assignment(store, "t") == [[1, 2], [2, 3], [3, 1]] and zk.partition_count(store, "t") == 3
    assert zk.partition_count(store, "missing") == 0 and zk.read_topic(store, "missing") is None


def test_the_topics_view_follows_the_store_and_keeps_creation_order(store):
    topics = Topics(ZkMetadata(store))
    assert len(topics) == 0 and "b" not in topics
    zk.create_topic(store, "b", [[1]], {}, "1")
    zk.create_topic(store, "a", [[1]], {}, "2")
    assert list(topics) == ["b", "a"] and topics["a"].topic_id == "2"
    zk.add_partitions(store, "b", [[1]])
    assert topics["b"].partitions == 2 and zk.all_partitions(store) == [("b", 0), ("b", 1), ("a", 0)]


def test_the_first_controller_gets_epoch_one_and_a_later_one_the_next(store):
    first, second = store.open_session(1), store.open_session(2)
    assert zk.elect_controller(store, 1, first) == 1
    assert zk.elect_controller(store, 2, second) is None and zk.controller_id(store) == 1
    store.expire_session(first)                      # /controller goes with its session; the epoch stays
    assert zk.controller_id(store) == -1 and zk.controller_epoch(store) == 1
    assert zk.elect_controller(store, 2, second) == 2 and zk.controller_id(store) == 2


def test_a_broker_restarted_within_its_session_re_registers_under_the_new_one(store):
    old = store.open_session(1)
    zk.register_broker(store, 1, {"incarnation": 1}, old, None)
    new = store.open_session(1)
    zk.register_broker(store, 1, {"incarnation": 3}, new, old)
    assert zk.registrations(store) == {1: 3} and not store.session_alive(old)
    store.expire_session(new)
    assert zk.registrations(store) == {}
