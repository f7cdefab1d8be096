"""Topic-level log configuration, under Kafka's own key names.

`LogConfig.from_dict({"segment.bytes": 1024, ...})` is how a topic's config reaches its log.
Unknown keys are an error (a typo must not silently fall back to a default); keys that belong to
other layers (replication, producers) are accepted here and ignored by the log, so one topic config
dict can be handed to every layer.
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

from engine.common.config_values import field_kind, parse_config_value
from engine.storage import compression
from engine.storage.errors import InvalidConfigError

# Kafka's defaults (storage/.../log/LogConfig.java, ServerLogConfigs.java).
DEFAULT_SEGMENT_BYTES = 1024 * 1024 * 1024
DEFAULT_SEGMENT_MS = 7 * 24 * 60 * 60 * 1000
DEFAULT_SEGMENT_INDEX_BYTES = 10 * 1024 * 1024
DEFAULT_INDEX_INTERVAL_BYTES = 4096
DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000
DEFAULT_MAX_MESSAGE_BYTES = 1024 * 1024 + 12  # 1048588: one 1 MiB batch plus its log overhead
LONG_MAX = 2**63 - 1
# Compaction (LogConfig / CleanerConfig): log.cleaner.min.cleanable.ratio, log.cleaner.delete.retention.ms.
DEFAULT_MIN_CLEANABLE_DIRTY_RATIO = 0.5
DEFAULT_DELETE_RETENTION_MS = 24 * 60 * 60 * 1000

# The smallest segment.bytes accepted: Kafka 3.x's floor (a legacy record's overhead). Kafka 4.0
# raised it to 1 MiB (KIP-1030); the lab keeps the old floor so a lesson can roll every few records.
MIN_SEGMENT_BYTES = 14

# Topic configs owned by other layers; valid in a topic config, not used by the log itself.
OTHER_LAYER_KEYS = frozenset({
    "min.insync.replicas",
    "unclean.leader.election.enable",
    "message.downconversion.enable",
    "preallocate",
    "follower.replication.throttled.replicas",
    "leader.replication.throttled.replicas",
})


@dataclass(frozen=True, slots=True)
class LogConfig:
    segment_bytes: int = DEFAULT_SEGMENT_BYTES
    segment_ms: int = DEFAULT_SEGMENT_MS
    segment_jitter_ms: int = 0
    segment_index_bytes: int = DEFAULT_SEGMENT_INDEX_BYTES
    index_interval_bytes: int = DEFAULT_INDEX_INTERVAL_BYTES
    retention_ms: int = DEFAULT_RETENTION_MS
    retention_bytes: int = -1
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    cleanup_policy: str = "delete"
    message_timestamp_type: str = "CreateTime"
    # The leader keeps a producer's batch when this is `producer` or the batch's own codec, and
    # recompresses it otherwise (engine.storage.log_validator, LogValidator); levels: KIP-390.
    compression_type: str = compression.TOPIC_PRODUCER
    compression_gzip_level: int = -1
    compression_lz4_level: int = 9
    compression_zstd_level: int = 3
    # Log compaction (engine.storage.cleaner; Kafka's LogConfig names and defaults).
    min_cleanable_dirty_ratio: float = DEFAULT_MIN_CLEANABLE_DIRTY_RATIO
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    delete_retention_ms: int = DEFAULT_DELETE_RETENTION_MS

    @classmethod
    def from_dict(cls, config: dict | LogConfig | None) -> LogConfig:
        if config is None:
            return cls()
        if isinstance(config, LogConfig):
            return config
        values: dict[str, Any] = {}   # each parsed to its own field's kind by _parse, which mypy cannot follow
        known = {_kafka_name(f.name): f for f in fields(cls)}
        for key, raw in config.items():
            if key in OTHER_LAYER_KEYS:
                continue
            f = known.get(key)
            if f is None:
                raise InvalidConfigError(f"Unknown topic config '{key}'")
            values[f.name] = _parse(key, raw, f.type)
        made = cls(**values)
        made.validate()
        return made

    def validate(self) -> None:
        if self.segment_bytes < MIN_SEGMENT_BYTES:
            raise InvalidConfigError(
                f"segment.bytes must be at least {MIN_SEGMENT_BYTES}, got {self.segment_bytes}")
        if self.segment_ms < 1:
            raise InvalidConfigError(f"segment.ms must be at least 1, got {self.segment_ms}")
        if self.segment_index_bytes < 12:
            raise InvalidConfigError("segment.index.bytes must hold at least one index entry")
        if self.index_interval_bytes < 0:
            raise InvalidConfigError("index.interval.bytes must be >= 0")
        if self.retention_ms < -1 or self.retention_bytes < -1:
            raise InvalidConfigError("retention.ms and retention.bytes must be >= -1 (-1 means unlimited)")
        if self.max_message_bytes < 0:
            raise InvalidConfigError("max.message.bytes must be >= 0")
        if self.flush_messages < 1 or self.flush_ms < 0:
            raise InvalidConfigError("flush.messages must be >= 1 and flush.ms >= 0")
        if self.cleanup_policy not in ("delete", "compact", "compact,delete", "delete,compact"):
            raise InvalidConfigError(f"cleanup.policy must be delete and/or compact, got {self.cleanup_policy!r}")
        if self.message_timestamp_type not in ("CreateTime", "LogAppendTime"):
            raise InvalidConfigError("message.timestamp.type must be CreateTime or LogAppendTime")
        if self.min_compaction_lag_ms > self.max_compaction_lag_ms:
            # LogConfig.validateValues' "conflict topic config setting" check.
            raise InvalidConfigError(
                f"conflict topic config setting min.compaction.lag.ms ({self.min_compaction_lag_ms}) > "
                f"max.compaction.lag.ms ({self.max_compaction_lag_ms})")
        compression.parse_codec(self.compression_type, "compression.type", InvalidConfigError,
                                compression.TOPIC_COMPRESSION_TYPES)
        for codec in compression.LEVELS:
            compression.check_level(codec, self.compression_level_of(codec), InvalidConfigError)

    @property
    def compact(self) -> bool:
        """cleanup.policy holds compact (LogConfig.compact): the log cleaner works on this log."""
        return "compact" in self.cleanup_policy

    def compression_level_of(self, codec: int) -> int | None:
        """The topic's compression.<codec>.level (None: the codec has no level)."""
        bounds = compression.LEVELS.get(codec)
        return None if bounds is None else int(getattr(self, bounds.config.replace(".", "_")))

    def to_dict(self) -> dict[str, object]:
        return {_kafka_name(f.name): getattr(self, f.name) for f in fields(self)}


def _kafka_name(field_name: str) -> str:
    return field_name.replace("_", ".")


def _parse(key: str, raw: object, type_name: object) -> object:
    return parse_config_value(key, raw, field_kind(type_name), InvalidConfigError)
