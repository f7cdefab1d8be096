"""Issue 11: a setting the engine cannot live with is refused where it is read, naming the key, the
value and what is allowed — NaN and Infinity, 1.5 for a whole number, a number past Kafka's type,
and a period or timeout of 0 ms, which made a timer fire again at the same virtual instant for
ever and hung the worker thread that built the cluster (part of finding 3)."""
from __future__ import annotations

import math
from pathlib import Path

import pytest

from engine import Cluster
from engine.clients.consumer_state import ConsumerConfig
from engine.clients.producer import ProducerConfigError, resolve_config
from engine.common.config_values import parse_config_value
from engine.storage.errors import InvalidConfigError


@pytest.mark.parametrize("key, value, message", [
    ("log.retention.check.interval.ms", 0, "must be at least 1 (ServerLogConfigs atLeast(1))"),
    ("replica.high.watermark.checkpoint.interval.ms", 0, "must be at least 1 (the lab's minimum"),
    ("log.flush.offset.checkpoint.interval.ms", 0, "must be at least 1 (the lab's minimum"),
    ("replica.socket.timeout.ms", 0, "must be at least 1"),
    ("network.min.delay.ms", 0, "must be from 1 to 60000"),
    ("offsets.topic.num.partitions", 3000, "must be from 1 to 1000"),
    ("replica.lag.time.max.ms", math.nan, "expected a number (an integer)"),
    ("replica.lag.time.max.ms", math.inf, "expected a number (an integer)"),
    ("replica.lag.time.max.ms", 1.5, "expected a number (an integer)"),
    ("replica.fetch.max.bytes", 2**31, "must be at least 0"),
    ("network.loss.rate", math.nan, "expected a finite number"),
])
def test_a_cluster_setting_out_of_bounds_is_refused_before_the_cluster_runs(tmp_path: Path, key, value, message):
    with pytest.raises(InvalidConfigError) as raised:
        Cluster(3, str(tmp_path), config={key: value})
    assert f"for configuration {key}: " in str(raised.value) and message in str(raised.value)


def test_whole_floats_and_text_are_still_whole_numbers() -> None:
    assert parse_config_value("segment.ms", 5000.0, "int", ValueError) == 5000
    assert parse_config_value("segment.ms", "5000", "int", ValueError) == 5000
    assert parse_config_value("segment.ms", "1e3", "int", ValueError) == 1000
    with pytest.raises(ValueError, match="for configuration segment.ms: must be at least 1"):
        parse_config_value("segment.ms", "0", "int", ValueError)


def test_client_timers_of_zero_are_refused() -> None:
    with pytest.raises(ProducerConfigError, match="request.timeout.ms: must be at least 1"):
        resolve_config({"request.timeout.ms": 0, "retry.backoff.ms": 0})
    with pytest.raises(InvalidConfigError, match="heartbeat.interval.ms: must be at least 1"):
        ConsumerConfig.from_dict({"heartbeat.interval.ms": 0})
    assert resolve_config({"linger.ms": 0})[0].linger_ms == 0   # a wait that runs once keeps Kafka's 0


def test_a_cluster_with_the_smallest_timers_still_moves_on(tmp_path: Path) -> None:
    """At the minimum every periodic timer advances virtual time: run_for ends."""
    cluster = Cluster(3, str(tmp_path), config={
        "log.retention.check.interval.ms": 1, "replica.high.watermark.checkpoint.interval.ms": 1,
        "log.flush.offset.checkpoint.interval.ms": 1, "network.min.delay.ms": 1, "network.max.delay.ms": 1,
        "replica.fetch.wait.max.ms": 0, "offsets.topic.num.partitions": 1})
    cluster.create_topic("t", 1, 3)
    cluster.run_for(200)
    assert cluster.now_ms >= 200
    cluster.close()
