"""Issue 11: a scenario file's cluster is checked whole before a cluster is built from it — its
settings' bounds too (a 0 ms retention-check interval hung `run`; 3,000 __consumer_offsets
partitions), and a step's `values` given as a string is refused, not made one record per character."""
from __future__ import annotations

import pytest

from engine.scenarios.runner import ScenarioError, validate


@pytest.mark.parametrize(("cluster", "message"), [
    ({"config": {"log.retention.check.interval.ms": 0}}, "log.retention.check.interval.ms: must be at least 1"),
    ({"config": {"offsets.topic.num.partitions": 3000}}, "offsets.topic.num.partitions: must be from 1 to 1000"),
    ({"config": {"segment.bytes": 3}}, "segment.bytes: must be at least 14"),
    ({"seed": 2**64}, "cluster.seed must be a whole number from -9223372036854775808 to 9223372036854775807"),
])
def test_a_scenario_cluster_outside_the_bounds_is_refused_before_it_runs(cluster: dict, message: str) -> None:
    with pytest.raises(ScenarioError, match="cluster") as raised:
        validate({"cluster": {"brokers": 3, **cluster}, "steps": []})
    assert message in str(raised.value)


def test_values_given_as_a_string_are_refused_in_a_scenario_step() -> None:
    with pytest.raises(ScenarioError, match="produce.values must be a list of 1 to 100000 strings"):
        validate({"cluster": {"brokers": 1}, "steps": [{"produce": {"topic": "t", "values": "abc" * 1000}}]})
