"""The lab's model names each broker's rack when the cluster gives brokers a broker.rack (the cluster view
draws it as a badge), and says nothing of racks otherwise."""
from __future__ import annotations

from pathlib import Path

from engine.cluster import Cluster
from lab.model import ModelTracker


def test_each_broker_carries_its_rack(tmp_path: Path) -> None:
    cluster = Cluster(brokers=3, data_dir=str(tmp_path / "racks"), seed=1,
                      config={"broker.rack": {"1": "us-east-1a", "3": "us-east-1c"}})

    brokers = ModelTracker(cluster).full()["brokers"]

    assert {b["id"]: b.get("rack") for b in brokers} == {1: "us-east-1a", 2: None, 3: "us-east-1c"}
    cluster.close()


def test_brokers_without_racks_have_no_rack_field(tmp_path: Path) -> None:
    cluster = Cluster(brokers=2, data_dir=str(tmp_path / "plain"), seed=1)

    assert all("rack" not in b for b in ModelTracker(cluster).full()["brokers"])
    cluster.close()
