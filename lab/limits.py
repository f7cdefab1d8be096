"""What one lab session may do: brokers, partitions, produce rate, disk and kept events.

The limits protect the process that hosts many sessions, so they are checked when a command
comes in (from a tab or a queued scenario), never when the command log is replayed: a command
that was accepted once is part of the session's history. A rejected command reaches neither the
engine nor the log, and the error says which limit it hit.

`Limits` is plain data; `Limits.from_settings()` reads Django's settings (the KAFKA_LAB_MAX_*
names in lab/settings.py) and is the only place here that touches Django.
"""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass
from typing import Any, Callable

from engine.cluster import MAX_BROKERS, Cluster


# One record alone in a v2 batch: the 61-byte batch header plus the record's own framing.
RECORD_OVERHEAD_BYTES = 70


class LimitExceeded(Exception):
    """A command over one of the session's limits; `kafka_name` is the nearest Kafka error."""

    def __init__(self, message: str, kafka_name: str = "POLICY_VIOLATION") -> None:
        super().__init__(message)
        self.kafka_name = kafka_name


@dataclass(frozen=True)
class Limits:
    max_brokers: int = MAX_BROKERS
    max_partitions: int = 64                 # over all topics of the session
    max_records_per_s: int = 2000            # produced, wall-clock; also the most records one command may carry
    max_disk_bytes: int = 256 * 1024 * 1024  # the session's run dir (every broker's logs and checkpoints)
    max_actions_per_call: int = 200_000      # scheduler actions one clock move may run before it yields

    @classmethod
    def from_settings(cls) -> Limits:
        from django.conf import settings
        return cls(max_brokers=settings.KAFKA_LAB_MAX_BROKERS,
                   max_partitions=settings.KAFKA_LAB_MAX_PARTITIONS,
                   max_records_per_s=settings.KAFKA_LAB_MAX_RECORDS_PER_S,
                   max_disk_bytes=settings.KAFKA_LAB_MAX_DISK_BYTES,
                   max_actions_per_call=settings.KAFKA_LAB_MAX_ACTIONS_PER_CALL)

    def to_dict(self) -> dict[str, int]:
        return asdict(self)

    def check_brokers(self, brokers: Any) -> int:
        if isinstance(brokers, bool) or not isinstance(brokers, int):
            raise LimitExceeded(f"brokers must be a whole number, not {brokers!r}", "INVALID_REQUEST")
        if not 1 <= brokers <= self.max_brokers:
            raise LimitExceeded(f"A lab session has 1 to {self.max_brokers} brokers, not {brokers}")
        return brokers


class RecordRate:
    """A token bucket over wall-clock time: `per_second` records a second, bursts up to one second's worth."""

    def __init__(self, per_second: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.per_second = per_second
        self._clock = clock
        self._tokens = float(per_second)
        self._last = clock()

    def take(self, records: int) -> None:
        now = self._clock()
        self._tokens = min(float(self.per_second), self._tokens + (now - self._last) * self.per_second)
        self._last = now
        if records > self.per_second:
            raise LimitExceeded(f"One command may produce at most {self.per_second} records in this lab "
                                f"session, not {records}", "THROTTLING_QUOTA_EXCEEDED")
        if records > self._tokens:
            raise LimitExceeded(f"This lab session may produce {self.per_second} records a second: "
                                f"wait a moment and send again", "THROTTLING_QUOTA_EXCEEDED")
        self._tokens -= records


def check_command(limits: Limits, cluster: Cluster, command: str, args: dict, rate: RecordRate,
                  disk_bytes: Callable[[], int]) -> None:
    """Raise LimitExceeded if `command` would take the session over a limit. `args` have passed
    engine.scenarios.schema.check_step: counts are ints, `values` a list, texts are strings."""
    if command in ("create_topic", "add_partitions"):
        _check_partitions(limits, cluster, command, args)
    elif command == "produce":
        _check_produce(limits, cluster, args, rate, disk_bytes)


def _check_partitions(limits: Limits, cluster: Cluster, command: str, args: dict) -> None:
    current = sum(info.partitions for info in cluster.topics.values())
    if command == "create_topic":
        assignment = args.get("replica_assignment")
        added = len(assignment) if assignment is not None else args.get("partitions", 1)
    else:
        info = cluster.topics.get(args["topic"])
        added = args["count"] - info.partitions if info is not None else 0  # no such topic: the engine says so
    if current + added > limits.max_partitions:
        raise LimitExceeded(f"A lab session holds at most {limits.max_partitions} partitions "
                            f"(it has {current}; this asks for {added} more)", "POLICY_VIOLATION")


def _check_produce(limits: Limits, cluster: Cluster, args: dict, rate: RecordRate,
                   disk_bytes: Callable[[], int]) -> None:
    values = args["values"] if args.get("values") is not None else [args.get("value")]
    used = disk_bytes()
    info = cluster.topics.get(args["topic"])
    copies = info.replication_factor if info is not None else 1
    key_chars = len(args.get("key") or "")
    incoming = copies * sum(len(v or "") + key_chars + RECORD_OVERHEAD_BYTES for v in values)
    if used + incoming > limits.max_disk_bytes:
        raise LimitExceeded(f"This lab session's disk is full: {used} of {limits.max_disk_bytes} bytes used "
                            f"(delete records by retention, or reset the session)", "POLICY_VIOLATION")
    rate.take(len(values))

