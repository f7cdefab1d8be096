"""A deleted topic's partitions leave the browsers' model: a patch names them in `partitions_removed`."""
from __future__ import annotations

from pathlib import Path

from engine import Cluster
from lab.model import ModelTracker


def test_a_patch_removes_a_deleted_topics_partitions(tmp_path: Path) -> None:
    cluster = Cluster(brokers=3, data_dir=str(tmp_path), seed=4)
    tracker = ModelTracker(cluster)
    cluster.subscribe(tracker.on_event)
    cluster.create_topic("gone", partitions=2, replication_factor=2)
    cluster.create_topic("kept", partitions=1, replication_factor=2)
    cluster.run_until_idle()
    assert set(tracker.full(baseline=True)["partitions"]) == {"gone-0", "gone-1", "kept-0"}
    cluster.delete_topic("gone")
    cluster.run_until_idle()
    patch = tracker.patch()
    assert patch is not None and patch["partitions_removed"] == [["gone", 0], ["gone", 1]]
    assert [t["topic"] for t in patch["topics"]] == ["kept"]
    assert set(tracker.full()["partitions"]) == {"kept-0"}
    again = tracker.patch()
    assert again is None or "partitions_removed" not in again
