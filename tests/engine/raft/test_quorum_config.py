"""QuorumConfig: Kafka's names and defaults, and clear errors for bad values."""
from __future__ import annotations

import pytest

from engine.raft.config import QuorumConfig
from engine.storage.errors import InvalidConfigError


def test_the_defaults_are_kafkas() -> None:
    assert QuorumConfig().to_dict() == {
        "controller.quorum.election.timeout.ms": 1000,
        "controller.quorum.fetch.timeout.ms": 2000,
        "controller.quorum.election.backoff.max.ms": 1000,
        "controller.quorum.request.timeout.ms": 2000,
        "controller.quorum.retry.backoff.ms": 20,
        "controller.quorum.append.linger.ms": 25,
        "metadata.log.segment.bytes": 1024 ** 3,
        "metadata.log.segment.ms": 604_800_000,
    }
    config = QuorumConfig()
    assert config.fetch_max_wait_ms == 500                 # KafkaRaftClient.MAX_FETCH_WAIT_MS
    assert config.check_quorum_timeout_ms == 3000          # fetch.timeout.ms * 1.5
    assert config.begin_quorum_epoch_timeout_ms == 1000    # fetch.timeout.ms / 2


def test_values_may_come_as_text_under_kafkas_names() -> None:
    config = QuorumConfig.from_dict({"controller.quorum.election.timeout.ms": "500",
                                     "metadata.log.segment.bytes": 4096})

    assert config.election_timeout_ms == 500 and config.metadata_log_segment_bytes == 4096


@pytest.mark.parametrize(("config", "named"), [
    ({"controller.quorum.election.timeout.ms": 0}, "controller.quorum.election.timeout.ms"),
    ({"controller.quorum.fetch.timeout.ms": "soon"}, "controller.quorum.fetch.timeout.ms"),
    ({"controller.quorum.request.timeout.ms": 1.5}, "controller.quorum.request.timeout.ms"),
    ({"metadata.log.segment.bytes": 10}, "metadata.log.segment.bytes"),
    ({"controller.quorum.voters.typo": 1}, "controller.quorum.voters.typo"),
])
def test_a_bad_value_names_the_setting(config: dict, named: str) -> None:
    with pytest.raises(InvalidConfigError) as raised:
        QuorumConfig.from_dict(config)

    assert named in str(raised.value)


def test_a_bad_field_is_refused_when_built_directly() -> None:
    with pytest.raises(InvalidConfigError, match="controller.quorum.fetch.timeout.ms"):
        QuorumConfig(fetch_timeout_ms=-1)
    with pytest.raises(InvalidConfigError, match="fetch_max_wait_ms"):
        QuorumConfig(fetch_max_wait_ms=-5)
