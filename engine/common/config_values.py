"""One place that reads a configuration value given under Kafka's name, and bounds it.

Configs reach the engine from Python code, JSON scenario files and web forms, so numbers and
booleans may come as text ("1024", "true"). Every config class (topic, broker, producer,
consumer) turns them into the field's type here, with the same clear error for bad input.

A number must also be one the engine can live with: finite (NaN and Infinity are refused), whole
where Kafka's type is INT/LONG (1.5 is not quietly 1), within Kafka's type (INT ≤ 2**31-1,
LONG ≤ 2**63-1) and at least Kafka's own minimum — `BOUNDS`, each citing the class whose
ConfigDef declares it. Where Kafka allows 0 for a period or a timeout, a 0 here would be a timer
that fires again at the same virtual instant for ever (a worker thread hung for good), so the lab
asks for at least 1 ms and says so (`lab_minimum`). Waits that run once (linger.ms,
fetch.max.wait.ms, group.initial.rebalance.delay.ms, backoffs) keep Kafka's 0.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

INT_MAX = 2**31 - 1        # Kafka's ConfigDef.Type.INT
LONG_MAX = 2**63 - 1       # ConfigDef.Type.LONG
SHORT_MAX = 2**15 - 1      # ConfigDef.Type.SHORT
MAX_PARTITIONS_PER_TOPIC = 1000   # the engine's most partitions in one topic (a scenario step's limit too)
MAX_NETWORK_DELAY_MS = 60_000     # the lab's simulated network: a minute is already a dead link


@dataclass(frozen=True)
class Bound:
    """The values a numeric setting takes: `low` to `high`; `source` is where Kafka declares the
    minimum; `lab_minimum` says the lab asks for more than Kafka (and why)."""
    low: int | float
    high: int | float
    source: str
    lab_minimum: str = ""


_TIMER = "a period or timeout of 0 ms would fire again at the same virtual instant for ever"


def _ms(low: int, high: int, source: str, lab: bool = False) -> Bound:
    return Bound(low, high, source, _TIMER if lab else "")


BOUNDS: dict[str, Bound] = {
    # broker (server/.../ReplicationConfigs.java, ServerLogConfigs.java, GroupCoordinatorConfig.java)
    "replica.lag.time.max.ms": _ms(1, LONG_MAX, "ReplicationConfigs (no validator)", lab=True),
    "replica.fetch.wait.max.ms": _ms(0, INT_MAX, "ReplicationConfigs (no validator)"),
    "replica.fetch.min.bytes": Bound(0, INT_MAX, "ReplicationConfigs (no validator)"),
    "replica.fetch.max.bytes": Bound(0, INT_MAX, "ReplicationConfigs atLeast(0)"),
    "replica.fetch.response.max.bytes": Bound(0, INT_MAX, "ReplicationConfigs atLeast(0)"),
    "replica.fetch.backoff.ms": _ms(0, INT_MAX, "ReplicationConfigs atLeast(0)"),
    "replica.socket.timeout.ms": _ms(1, INT_MAX, "ReplicationConfigs (no validator)", lab=True),
    "replica.high.watermark.checkpoint.interval.ms": _ms(1, LONG_MAX, "ReplicationConfigs (no validator)",
                                                         lab=True),
    "log.flush.offset.checkpoint.interval.ms": _ms(1, INT_MAX, "ServerLogConfigs atLeast(0)", lab=True),
    "log.retention.check.interval.ms": _ms(1, LONG_MAX, "ServerLogConfigs atLeast(1)"),
    "min.insync.replicas": Bound(1, INT_MAX, "ServerLogConfigs atLeast(1)"),
    "zookeeper.session.timeout.ms": _ms(1, INT_MAX, "ZkConfigs (no validator)", lab=True),
    "offsets.topic.num.partitions": Bound(1, MAX_PARTITIONS_PER_TOPIC, "GroupCoordinatorConfig atLeast(1)"),
    "offsets.topic.replication.factor": Bound(1, SHORT_MAX, "GroupCoordinatorConfig atLeast(1)"),
    "offsets.commit.timeout.ms": _ms(1, INT_MAX, "GroupCoordinatorConfig atLeast(1)"),
    "group.initial.rebalance.delay.ms": _ms(0, INT_MAX, "GroupCoordinatorConfig (no validator)"),
    "group.min.session.timeout.ms": _ms(0, INT_MAX, "GroupCoordinatorConfig (no validator)"),
    "group.max.session.timeout.ms": _ms(0, INT_MAX, "GroupCoordinatorConfig (no validator)"),
    "log.segment.delete.delay.ms": _ms(0, LONG_MAX, "ServerLogConfigs atLeast(0)"),
    "log.cleaner.backoff.ms": _ms(1, LONG_MAX, "CleanerConfig atLeast(0)", lab=True),
    "leader.imbalance.check.interval.seconds": Bound(1, LONG_MAX // 1000, "ReplicationConfigs atLeast(1)"),
    "leader.imbalance.per.broker.percentage": Bound(0, INT_MAX, "ReplicationConfigs (no validator)"),
    # the lab's simulated network (not Kafka's): a 0 ms hop lets a fetch with no wait loop in one instant
    "network.min.delay.ms": Bound(1, MAX_NETWORK_DELAY_MS, "the lab's network", _TIMER),
    "network.max.delay.ms": Bound(1, MAX_NETWORK_DELAY_MS, "the lab's network", _TIMER),
    # topic (storage/.../log/LogConfig.java; LogConfig.validate keeps the finer rules)
    "segment.bytes": Bound(14, INT_MAX, "LogConfig atLeast(LegacyRecord.RECORD_OVERHEAD_V0)"),
    "segment.ms": _ms(1, LONG_MAX, "LogConfig atLeast(1)"),
    "segment.jitter.ms": _ms(0, LONG_MAX, "LogConfig atLeast(0)"),
    "segment.index.bytes": Bound(4, INT_MAX, "LogConfig atLeast(4)"),
    "index.interval.bytes": Bound(0, INT_MAX, "LogConfig atLeast(0)"),
    "retention.ms": _ms(-1, LONG_MAX, "LogConfig atLeast(-1)"),
    "retention.bytes": Bound(-1, LONG_MAX, "LogConfig (-1: unlimited)"),
    "max.message.bytes": Bound(0, INT_MAX, "LogConfig atLeast(0)"),
    "flush.messages": Bound(1, LONG_MAX, "LogConfig atLeast(1)"),
    "flush.ms": _ms(0, LONG_MAX, "LogConfig atLeast(0)"),
    "min.cleanable.dirty.ratio": Bound(0, 1, "LogConfig between(0, 1)"),
    "min.compaction.lag.ms": _ms(0, LONG_MAX, "LogConfig atLeast(0)"),
    "max.compaction.lag.ms": _ms(1, LONG_MAX, "LogConfig atLeast(1)"),
    "delete.retention.ms": _ms(0, LONG_MAX, "LogConfig atLeast(0)"),
    # clients (clients/.../producer/ProducerConfig.java, consumer/ConsumerConfig.java, CommonClientConfigs)
    "request.timeout.ms": _ms(1, INT_MAX, "CommonClientConfigs atLeast(0)", lab=True),
    "retry.backoff.ms": _ms(0, LONG_MAX, "CommonClientConfigs atLeast(0)"),
    "retry.backoff.max.ms": _ms(0, LONG_MAX, "CommonClientConfigs atLeast(0)"),
    "metadata.max.age.ms": _ms(0, LONG_MAX, "CommonClientConfigs atLeast(0)"),
    "batch.size": Bound(0, INT_MAX, "ProducerConfig atLeast(0)"),
    "linger.ms": _ms(0, INT_MAX, "ProducerConfig atLeast(0)"),
    "buffer.memory": Bound(0, LONG_MAX, "ProducerConfig atLeast(0)"),
    "max.block.ms": _ms(0, LONG_MAX, "ProducerConfig atLeast(0)"),
    "max.request.size": Bound(0, INT_MAX, "ProducerConfig atLeast(0)"),
    "max.in.flight.requests.per.connection": Bound(1, INT_MAX, "ProducerConfig atLeast(1)"),
    "retries": Bound(0, INT_MAX, "ProducerConfig between(0, Integer.MAX_VALUE)"),
    "delivery.timeout.ms": _ms(0, INT_MAX, "ProducerConfig atLeast(0)"),
    "max.poll.records": Bound(1, INT_MAX, "ConsumerConfig atLeast(1)"),
    "max.poll.interval.ms": _ms(1, INT_MAX, "ConsumerConfig atLeast(1)"),
    "fetch.min.bytes": Bound(0, INT_MAX, "ConsumerConfig atLeast(0)"),
    "fetch.max.wait.ms": _ms(0, INT_MAX, "ConsumerConfig atLeast(0)"),
    "fetch.max.bytes": Bound(0, INT_MAX, "ConsumerConfig atLeast(0)"),
    "max.partition.fetch.bytes": Bound(0, INT_MAX, "ConsumerConfig atLeast(0)"),
    "auto.commit.interval.ms": _ms(0, INT_MAX, "ConsumerConfig atLeast(0)"),
    "session.timeout.ms": _ms(1, INT_MAX, "ConsumerConfig (no validator)", lab=True),
    "heartbeat.interval.ms": _ms(1, INT_MAX, "ConsumerConfig (no validator)", lab=True),
    "default.api.timeout.ms": _ms(0, INT_MAX, "CommonClientConfigs atLeast(0)"),
}


def field_kind(annotation: Any) -> str:
    """"int", "bool", "float" or "str" for a dataclass field's annotation (a string under
    `from __future__ import annotations`, e.g. "int" or "str | None")."""
    if isinstance(annotation, type):
        return annotation.__name__
    return str(annotation).split("|")[0].strip()


def parse_config_value(key: str, raw: Any, kind: str, error: type[Exception]) -> Any:
    """`raw` as `kind`, within BOUNDS[key]; raises `error` naming the key, the value given and
    what is allowed when it cannot be."""
    if kind == "bool":
        if isinstance(raw, bool):
            return raw
        text = str(raw).strip().lower()
        if text in ("true", "false"):
            return text == "true"
        raise error(f"Invalid value {raw!r} for configuration {key}: expected true or false")
    if kind in ("int", "float"):
        value = _number(key, raw, kind, error)
        bound = BOUNDS.get(key)
        if bound is not None and not bound.low <= value <= bound.high:
            raise error(f"Invalid value {raw!r} for configuration {key}: {describe_bound(bound)}")
        return value
    return None if raw is None else str(raw)


def describe_bound(bound: Bound) -> str:
    """"must be at least 1 (the lab's minimum: …; Kafka: ServerLogConfigs atLeast(0))"."""
    if bound.high in (INT_MAX, LONG_MAX, SHORT_MAX):
        text = f"must be at least {bound.low}"
    else:
        text = f"must be from {bound.low} to {bound.high}"
    if bound.lab_minimum:
        return f"{text} (the lab's minimum: {bound.lab_minimum}; Kafka: {bound.source})"
    return f"{text} ({bound.source})"


def _number(key: str, raw: Any, kind: str, error: type[Exception]) -> int | float:
    expected = "a number (an integer)" if kind == "int" else "a finite number"
    value: Any = None
    if isinstance(raw, bool):
        value = None
    elif isinstance(raw, int):
        value = raw
    elif isinstance(raw, float):
        value = raw if math.isfinite(raw) else None
    elif isinstance(raw, str) and len(raw) <= 40:
        try:
            value = int(raw.strip()) if kind == "int" else float(raw)
        except ValueError:
            value = _whole_float(raw) if kind == "int" else None
    if kind == "int" and isinstance(value, float):
        value = int(value) if value.is_integer() else None
    if isinstance(value, float) and not math.isfinite(value):
        value = None
    if value is None:
        raise error(f"Invalid value {raw!r} for configuration {key}: expected {expected}")
    return value if kind == "int" else float(value)


def _whole_float(text: str) -> float | None:
    """"5000.0" or "1e3" (a JSON writer's float, as text) is a whole number; "1.5" is not."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value.is_integer() else None
