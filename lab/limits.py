"""What one lab session may do: brokers, partitions, produce rate, disk and kept events.

The limits protect the process that hosts many sessions, so they are checked when a command
comes in (from a tab or a queued scenario), never when the command log is replayed: a command
that was accepted once is part of the session's history. A rejected command reaches neither the
engine nor the log, and the error says which limit it hit.

`Limits` is plain data; `Limits.from_settings()` reads Django's settings (the KAFKA_LAB_MAX_*
names in lab/settings.py) and is the only place here that touches Django. `Limits.check_shape`
is the one check of a cluster shape from a tab's `reset`, a scenario or a form (its fields, its
settings' bounds, the internal topics' partitions under the cap), before anything is reset or stored.
"""
from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from engine.cluster import MAX_BROKERS, Cluster
from engine.config import CONTROLLER_MODES, METADATA_MODES, split_config
from engine.replication.fetcher import TRUNCATION_MODES
from engine.scenarios.schema import StepArgumentError, check_cluster
from engine.storage.errors import InvalidConfigError
from lab.host_types import Shape

# Kafka's internal topics whose partition count a session's config sets: each is bounded by the
# session's partition cap (GroupCoordinatorConfig OFFSETS_TOPIC_PARTITIONS_CONFIG; the transaction
# coordinator's TRANSACTIONS_TOPIC_PARTITIONS_CONFIG, for when the engine has one).
INTERNAL_TOPIC_PARTITIONS = {"offsets.topic.num.partitions": ("__consumer_offsets", 50),
                             "transaction.state.log.num.partitions": ("__transaction_state", 50)}


# One record alone in a v2 batch: the 61-byte batch header plus the record's own framing.
RECORD_OVERHEAD_BYTES = 70


class LimitExceeded(Exception):
    """A command over one of the session's limits; `kafka_name` is the nearest Kafka error."""

    def __init__(self, message: str, kafka_name: str = "POLICY_VIOLATION", field: str = "") -> None:
        super().__init__(message)
        self.kafka_name, self.field = kafka_name, field   # `field`: the shape's field at fault, if known


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

    def check_shape(self, brokers: Any, seed: Any, truncation: Any, config: Any) -> Shape:
        """A cluster shape from a tab, a form or a scenario, checked whole before anything is reset
        or stored: the fields' types and ranges (the seed within the database's BIGINT, no NaN,
        engine.scenarios.schema.check_cluster), the settings' own bounds (engine.common.config_values:
        Kafka's minimums, no 0 ms timer), the brokers and the internal topics' partitions under
        this session's limits. Raises LimitExceeded naming the field."""
        _check_metadata_mode(config)
        try:
            shape = check_cluster({"brokers": brokers, "seed": seed, "truncation": truncation,
                                   "config": config if config is not None else {}})
            truncation = {"truncation": shape["truncation"]} if shape.get("truncation") else {}
            split_config({**shape["config"], **truncation})
        except StepArgumentError as error:
            raise LimitExceeded(str(error), error.kafka_name, error.field or "config") from None
        except InvalidConfigError as error:
            raise LimitExceeded(str(error), "INVALID_CONFIG", "config") from None
        for key, (topic, default) in INTERNAL_TOPIC_PARTITIONS.items():
            # Kafka's default (50) always fits, whatever the session's partition limit: a server
            # configured with a lower limit still runs default sessions; a larger count may not
            # go over the limit (3,000 made 30,000 files).
            most = max(self.max_partitions, default)
            partitions = shape["config"].get(key, default)
            if int(partitions) > most:
                raise LimitExceeded(f"config.{key} is {partitions}: {topic} may have at most "
                                    f"{most} partitions in a lab session (its partition limit)",
                                    "POLICY_VIOLATION", "config")
        truncation = shape.get("truncation") or shape["config"].get("truncation") or "leader-epoch"
        if truncation not in TRUNCATION_MODES:
            raise LimitExceeded(f"config.truncation must be one of {', '.join(TRUNCATION_MODES)}, not "
                                f"{truncation!r}", "INVALID_CONFIG", "config")
        return Shape(self.check_brokers(shape["brokers"]), shape["seed"], str(truncation), shape["config"])

    def check_brokers(self, brokers: Any) -> int:
        if isinstance(brokers, bool) or not isinstance(brokers, int):
            raise LimitExceeded(f"brokers must be a whole number, not {brokers!r}", "INVALID_REQUEST")
        if not 1 <= brokers <= self.max_brokers:
            raise LimitExceeded(f"A lab session has 1 to {self.max_brokers} brokers, not {brokers}")
        return brokers


def _check_metadata_mode(config: Any) -> None:
    """The cluster's metadata mode (config `metadata`, KRaft's `controller.mode`), refused by the
    new-session form's own field names (metadata, controllers) before anything is built."""
    if not isinstance(config, dict):
        return   # check_cluster says what a config must be
    mode = config.get("metadata", "zookeeper")
    if mode not in METADATA_MODES:
        raise LimitExceeded(f"metadata must be one of {', '.join(METADATA_MODES)}, not {mode!r}", "INVALID_CONFIG",
                            "metadata")
    controllers = config.get("controller.mode", "combined")
    if controllers not in CONTROLLER_MODES:
        raise LimitExceeded(f"controller.mode (controllers) must be one of {', '.join(CONTROLLER_MODES)}, not "
                            f"{controllers!r}", "INVALID_CONFIG", "controllers")


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

