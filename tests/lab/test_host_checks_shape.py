"""A shape that reaches a host by any road (here straight, as a database row stored before the
edge checks would) is held to the session's limits: the internal topics' partitions under the
partition cap, no 0 ms timer, a seed within BIGINT (issue 11, findings 2, 3 and 6)."""
from __future__ import annotations

import pytest

from lab.host import HostError, SessionHost, Shape


@pytest.mark.parametrize("shape, said", [
    (Shape(3, 1, "leader-epoch", {"offsets.topic.num.partitions": 3000}), "offsets.topic.num.partitions"),
    (Shape(3, 1, "leader-epoch", {"log.retention.check.interval.ms": 0}), "log.retention.check.interval.ms"),
    (Shape(3, 2**64, "leader-epoch", {}), "seed"),
])
def test_a_host_refuses_a_shape_over_the_limits(tmp_path, shape, said) -> None:
    with pytest.raises(HostError) as refused:
        SessionHost(str(tmp_path / "s"), shape, history=False, checkpoints=False)
    assert said in str(refused.value)


def test_a_reset_to_a_shape_over_the_limits_keeps_the_old_cluster(tmp_path) -> None:
    host = SessionHost(str(tmp_path / "s"), Shape(3, 1, "leader-epoch", {}), history=False, checkpoints=False)
    try:
        with pytest.raises(HostError):
            host.reset(Shape(3, 1, "leader-epoch", {"offsets.topic.num.partitions": 3000}))
        assert host.shape == Shape(3, 1, "leader-epoch", {})
    finally:
        host.close()
