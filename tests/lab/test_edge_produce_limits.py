"""Issue 11, finding 6: every way of producing goes through the session's limits — a command, a
named producer with batching, a queued scenario's step — and `values` given as a string is
refused, not made one record per character (302,000 records in 13 s against 2,000/s)."""
from __future__ import annotations

from pathlib import Path

import pytest

from lab.host import HostError, SessionHost, Shape
from lab.limits import Limits


class Wall:
    now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def host(tmp_path: Path):
    host = SessionHost(str(tmp_path), Shape(3, 1, "leader-epoch", {"offsets.topic.num.partitions": 1}),
                       limits=Limits(max_records_per_s=10), wall_clock=Wall(), checkpoints=False)
    host.apply("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})
    yield host
    host.close()


def test_values_given_as_a_string_is_refused(host: SessionHost) -> None:
    with pytest.raises(HostError, match="produce.values must be a list of 1 to 100000 strings"):
        host.apply("produce", {"topic": "t", "values": "x" * 5000})
    assert host.snapshot()["produced_count"] == 0


def test_a_named_producer_with_batching_is_held_to_the_rate(host: SessionHost) -> None:
    with pytest.raises(HostError, match="at most 10 records in this lab session, not 11") as raised:
        host.apply("produce", {"topic": "t", "values": [str(i) for i in range(11)], "producer": "p",
                               "config": {"linger.ms": 50, "batch.size": 1000}})
    assert raised.value.kafka_error == "THROTTLING_QUOTA_EXCEEDED"
    assert host.snapshot()["produced_count"] == 0


def test_a_scenario_step_is_held_to_the_rate(host: SessionHost) -> None:
    host.load_scenario({"name": "flood", "cluster": {"brokers": 3, "config": {"offsets.topic.num.partitions": 1}},
                        "steps": [{"create_topic": {"topic": "t", "replication_factor": 3}},
                                  {"produce": {"topic": "t", "values": [str(i) for i in range(11)]}}]})
    host.step()
    host.step()

    notices = host.take_notices()
    assert any("step 1 (produce) failed: One command may produce at most 10 records" in n["message"]
               for n in notices), notices
    assert host.snapshot()["produced_count"] == 0
