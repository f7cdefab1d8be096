"""A lab session stays within its limits: brokers, partitions, produce rate, disk."""
from __future__ import annotations

from pathlib import Path

import pytest

from lab.host import HostError, SessionHost, Shape
from lab.limits import Limits


class FakeWallClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make_host(root: Path, limits: Limits, wall_clock: FakeWallClock | None = None) -> SessionHost:
    host = SessionHost(str(root), Shape(3, 1, "leader-epoch", {}), limits=limits,
                       wall_clock=wall_clock or FakeWallClock())
    host.apply("create_topic", {"topic": "t", "partitions": 2, "replication_factor": 3})
    return host


def test_it_refuses_more_brokers_than_the_limit(tmp_path: Path) -> None:
    with pytest.raises(HostError, match="1 to 9, not 10"):
        SessionHost(str(tmp_path / "a"), Shape(10, 1, "leader-epoch", {}))
    host = SessionHost(str(tmp_path / "b"), Shape(3, 1, "leader-epoch", {}), limits=Limits(max_brokers=4))

    with pytest.raises(HostError, match="1 to 4 brokers, not 5"):
        host.reset(Shape(5, 1, "leader-epoch", {}))


def test_it_refuses_partitions_over_the_session_limit(tmp_path: Path) -> None:
    host = make_host(tmp_path, Limits(max_partitions=6))

    with pytest.raises(HostError) as raised:
        host.apply("create_topic", {"topic": "big", "partitions": 5, "replication_factor": 1})
    host.apply("create_topic", {"topic": "fits", "partitions": 4, "replication_factor": 1})

    assert raised.value.message == "A lab session holds at most 6 partitions (it has 2; this asks for 5 more)"
    assert raised.value.kafka_error == "POLICY_VIOLATION"
    assert [t["topic"] for t in host.snapshot()["topics"]] == ["t", "fits"]
    assert len(host.timeline()["marks"]) == 2  # the refused command is not in the log


def test_it_limits_records_produced_a_second(tmp_path: Path) -> None:
    wall = FakeWallClock()
    host = make_host(tmp_path, Limits(max_records_per_s=10), wall)

    host.apply("produce", {"topic": "t", "values": [str(i) for i in range(8)]})
    with pytest.raises(HostError, match="may produce 10 records a second") as raised:
        host.apply("produce", {"topic": "t", "values": ["a", "b", "c"]})
    with pytest.raises(HostError, match="at most 10 records in this lab session, not 11"):
        host.apply("produce", {"topic": "t", "values": [str(i) for i in range(11)]})
    wall.now += 0.5
    host.apply("produce", {"topic": "t", "values": ["a", "b", "c"]})

    assert raised.value.kafka_error == "THROTTLING_QUOTA_EXCEEDED"
    assert host.snapshot()["produced_count"] == 11


def test_it_refuses_to_produce_when_the_disk_limit_is_reached(tmp_path: Path) -> None:
    wall = FakeWallClock()
    host = make_host(tmp_path, Limits(max_disk_bytes=4000), wall)
    host.apply("produce", {"topic": "t", "key": "k", "values": ["x" * 100] * 5, "acks": 1})
    for _ in range(200):
        host.step()

    with pytest.raises(HostError, match="disk is full") as raised:
        host.apply("produce", {"topic": "t", "key": "k", "values": ["x" * 100] * 5})

    assert raised.value.kafka_error == "POLICY_VIOLATION"
    assert 2000 < host.disk_bytes() <= 4000

