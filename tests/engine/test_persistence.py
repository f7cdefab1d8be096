"""A saved cluster comes back with its topics (ids, configs, creation order) and its controller epoch."""
from __future__ import annotations

import json
import os

from engine import persistence
from engine.metadata import zk


def test_a_saved_cluster_reopens_with_its_topics_ids_and_controller_epoch(tmp_path):
    path = str(tmp_path / "lab")
    cluster = persistence.create(path, brokers=3, seed=2)
    cluster.create_topic("zeta", partitions=2, replication_factor=2, config={"retention.ms": 60000})
    cluster.create_topic("alpha", partitions=1, replication_factor=3)
    saved = {name: cluster.topics[name] for name in cluster.topics}
    persistence.close(cluster)
    again = persistence.open_cluster(path)
    assert {name: again.topics[name] for name in again.topics} == saved
    assert list(again.topics) == ["zeta", "alpha"]
    assert again.controller_epoch == 2                      # a new controller for the new process
    again.close()


def test_files_saved_before_the_store_kept_topic_ids_and_the_epoch_still_open(tmp_path):
    path = str(tmp_path / "lab")
    cluster = persistence.create(path, brokers=1, seed=2)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    topic_id = cluster.topics["t"].topic_id
    persistence.close(cluster)
    # The first format: ids only in cluster.json, no /controller_epoch node.
    store_file = os.path.join(path, persistence.STORE_FILE)
    with open(store_file, encoding="utf-8") as f:
        nodes = json.load(f)
    nodes[zk.topic_path("t")].pop("topic_id")
    nodes.pop(zk.CONTROLLER_EPOCH_PATH)
    with open(store_file, "w", encoding="utf-8") as f:
        json.dump(nodes, f)
    again = persistence.open_cluster(path)
    assert again.topics["t"].topic_id == topic_id and again.controller_epoch == 2
    again.close()


def test_a_kraft_cluster_reopens_from_its_metadata_logs(tmp_path):
    from engine import persistence
    data_dir = str(tmp_path / "kraft")
    cluster = persistence.create(data_dir, config={"metadata": "kraft"})
    cluster.create_topic("t", partitions=2, replication_factor=3)
    cluster.produce("t", key=b"k", value=b"v", partition=1, acks=-1)
    cluster.run_until_idle()
    epoch = cluster.controller_epoch
    persistence.close(cluster)
    reopened = persistence.open_cluster(data_dir)
    assert reopened.kraft and reopened.store.dump() == {}          # nothing came back through ZooKeeper
    assert reopened.list_topics() == ["t"] and reopened.controller_epoch > epoch
    reopened.run_until_idle()
    assert [r.value for r in reopened.read("t", 1)] == [b"v"]
    assert sorted(reopened.registrations()) == [1, 2, 3]
