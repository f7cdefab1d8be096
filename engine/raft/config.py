"""The KRaft quorum's settings, under Kafka's names and with Kafka's defaults.

    QuorumConfig.from_dict({"controller.quorum.election.timeout.ms": 500})

Kafka declares the `controller.quorum.*` keys in raft/.../QuorumConfig.java and the metadata log's
segment settings in server/.../KRaftConfigs.java. None of the quorum timeouts has a validator in
Kafka; the lab asks for at least 1 ms where a 0 would be a timer firing again at the same virtual
instant for ever (engine.common.config_values says why), and keeps Kafka's 0 for one-off waits.

`fetch_max_wait_ms` is not a setting in Kafka: it is KafkaRaftClient.MAX_FETCH_WAIT_MS (500 ms),
the long poll every Raft Fetch asks for. It is a field here so a test may shorten it; it has no
dotted key.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.common.config_values import INT_MAX, LONG_MAX, Bound, describe_bound, parse_config_value
from engine.storage.errors import InvalidConfigError

_TIMER = "a period or timeout of 0 ms would fire again at the same virtual instant for ever"

# Kafka's key -> (field, bound). Defaults are the dataclass's.
KEYS: dict[str, tuple[str, Bound]] = {
    "controller.quorum.election.timeout.ms": (
        "election_timeout_ms", Bound(1, INT_MAX, "QuorumConfig (no validator)", _TIMER)),
    "controller.quorum.fetch.timeout.ms": (
        "fetch_timeout_ms", Bound(1, INT_MAX, "QuorumConfig (no validator)", _TIMER)),
    "controller.quorum.election.backoff.max.ms": (
        "election_backoff_max_ms", Bound(0, INT_MAX, "QuorumConfig (no validator)")),
    "controller.quorum.request.timeout.ms": (
        "request_timeout_ms", Bound(1, INT_MAX, "QuorumConfig (no validator)", _TIMER)),
    "controller.quorum.retry.backoff.ms": (
        "retry_backoff_ms", Bound(0, INT_MAX, "QuorumConfig (no validator)")),
    "controller.quorum.append.linger.ms": (
        "append_linger_ms", Bound(0, INT_MAX, "QuorumConfig (no validator)")),
    # Kafka: atLeast(Records.LOG_OVERHEAD), then KafkaMetadataLog refuses less than
    # metadata.log.segment.min.bytes (8 MiB, an internal setting). The lab keeps the topic
    # segments' floor so a lesson can show the metadata log rolling.
    "metadata.log.segment.bytes": (
        "metadata_log_segment_bytes", Bound(14, INT_MAX, "KRaftConfigs atLeast(Records.LOG_OVERHEAD)")),
    "metadata.log.segment.ms": (
        "metadata_log_segment_ms", Bound(1, LONG_MAX, "KRaftConfigs (no validator)", _TIMER)),
}


@dataclass(frozen=True)
class QuorumConfig:
    """Kafka's QuorumConfig (and the metadata log's KRaftConfigs), dots turned into underscores."""
    election_timeout_ms: int = 1000          # controller.quorum.election.timeout.ms
    fetch_timeout_ms: int = 2000             # controller.quorum.fetch.timeout.ms
    election_backoff_max_ms: int = 1000      # controller.quorum.election.backoff.max.ms
    request_timeout_ms: int = 2000           # controller.quorum.request.timeout.ms
    retry_backoff_ms: int = 20               # controller.quorum.retry.backoff.ms
    append_linger_ms: int = 25               # controller.quorum.append.linger.ms (not used: see client.py)
    metadata_log_segment_bytes: int = 1024 * 1024 * 1024   # metadata.log.segment.bytes (LogConfig's 1 GiB)
    metadata_log_segment_ms: int = 7 * 24 * 60 * 60 * 1000  # metadata.log.segment.ms (7 days)
    fetch_max_wait_ms: int = 500             # KafkaRaftClient.MAX_FETCH_WAIT_MS (no key)

    def __post_init__(self) -> None:
        for key, (name, bound) in KEYS.items():
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise InvalidConfigError(f"Invalid value {value!r} for configuration {key}: expected an integer")
            if not bound.low <= value <= bound.high:
                raise InvalidConfigError(f"Invalid value {value!r} for configuration {key}: {describe_bound(bound)}")
        if isinstance(self.fetch_max_wait_ms, bool) or not isinstance(self.fetch_max_wait_ms, int) \
                or self.fetch_max_wait_ms < 0:
            raise InvalidConfigError(f"fetch_max_wait_ms must be an integer >= 0, got {self.fetch_max_wait_ms!r}")

    @classmethod
    def from_dict(cls, config: dict[str, Any] | None) -> QuorumConfig:
        """Settings under Kafka's dotted names (text or numbers); an unknown key or a bad value is
        an InvalidConfigError naming it."""
        values: dict[str, Any] = {}
        for key, raw in (config or {}).items():
            entry = KEYS.get(key)
            if entry is None:
                raise InvalidConfigError(f"Unknown quorum config '{key}' (known: {', '.join(sorted(KEYS))})")
            name, bound = entry
            value = parse_config_value(key, raw, "int", InvalidConfigError)
            if not bound.low <= value <= bound.high:
                raise InvalidConfigError(f"Invalid value {raw!r} for configuration {key}: {describe_bound(bound)}")
            values[name] = value
        return cls(**values)

    def to_dict(self) -> dict[str, int]:
        """The settings under Kafka's names (fetch_max_wait_ms has none, and is left out)."""
        return {key: getattr(self, name) for key, (name, _) in KEYS.items()}

    @property
    def check_quorum_timeout_ms(self) -> int:
        """LeaderState's checkQuorumTimeoutMs: fetch.timeout.ms * CHECK_QUORUM_TIMEOUT_FACTOR (1.5)."""
        return int(self.fetch_timeout_ms * 1.5)

    @property
    def begin_quorum_epoch_timeout_ms(self) -> int:
        """LeaderState's beginQuorumEpochTimeoutMs: how often a leader re-sends BeginQuorumEpoch to a
        voter that has not acknowledged it (fetch.timeout.ms / 2)."""
        return self.fetch_timeout_ms // 2

