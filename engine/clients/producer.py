"""The producer client: Kafka's KafkaProducer, in virtual time, on the lab's network.

    producer = cluster.producer("p1", {"linger.ms": 5, "enable.idempotence": True})
    record = producer.send("t", key="k", value="v")   # returns at once: the record waits in a batch
    producer.flush()                                  # runs the cluster until every record is answered
    record.acked, record.offset                       # True, 0

It is a client node "producer-<name>" on the network (engine/node.py), a peer of the brokers: it
knows them from its bootstrap list and its metadata answers, nothing else. `send()` picks
the partition (explicit, else the key's murmur2 hash over all partitions, else the null-key
partitioner: sticky (KIP-794, the default) or the pre-2.4 round robin), appends the record to
the RecordAccumulator and returns a ProducedRecord — Kafka's future; `send_batch()` is send()
for many records in one call (the same path per record, the per-call work done once). The
Sender (sender.py) sends the batches, retries them and completes the records.

Settings have Kafka's names and defaults (`resolve_config`), with one version choice:
`linger.ms` defaults to 5, as in Kafka 4.0 (KIP-1030); Kafka 3.x used 0. Idempotence follows
Kafka 3.2+: on by default, silently turned off (with a warning in `warnings`) when `acks` is not
all, `retries` is 0 or more than 5 requests may be in flight, but an error if it was asked for
explicitly with such settings (KAFKA-13673).

Blocking: Kafka's send() blocks the calling thread while it waits for the topic's metadata or
for `buffer.memory`. Here send() never moves time (it is a command, like every command of the
lab): such a record waits inside the producer, and every later record waits behind it, as they
would behind a blocked thread, until the sender can place it, or fails once `max.block.ms` of
virtual time has passed. Only flush(), close() and partitions_for() (Kafka's partitionsFor: it waits
for the topic's metadata) run the cluster's scheduler (call them from outside it: a scenario
step, a test, the lab; never from a scheduled action or an event callback).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Any, NamedTuple

from engine import events as ev
from engine.clients.accumulator import RecordAccumulator, record_size_upper_bound
from engine.clients.partitioner import NullKeyPartitioner, choose_partition
from engine.clients.sender import Sender
from engine.common.config_values import parse_config_value
from engine.common.errors import Errors, KafkaError
from engine.node import Node, World
from engine.produced_log import ProducedLog
from engine.protocol import PartitionMetadata
from engine.storage import compression

try:   # ProducedRecords of atomic values out of the cyclic GC; None without the C extension
    from engine.storage._columnar import untrack_atomic as _untrack_atomic
except ImportError:
    _untrack_atomic = None

PARTITIONERS = ("sticky", "round-robin")
COMPRESSION_TYPES = compression.PRODUCER_COMPRESSION_TYPES   # none, gzip, snappy, lz4, zstd
MAX_IN_FLIGHT_FOR_IDEMPOTENCE = 5
# Accepted so that configs copied from Java code work, but the lab does not model them.
NOT_MODELLED = frozenset({
    "bootstrap.servers", "client.id", "key.serializer", "value.serializer", "send.buffer.bytes",
    "receive.buffer.bytes", "connections.max.idle.ms", "reconnect.backoff.ms", "reconnect.backoff.max.ms",
    "interceptor.classes", "metadata.max.idle.ms", "partitioner.availability.timeout.ms",
    "security.protocol", "client.dns.lookup"})


class ProducerConfigError(KafkaError, ValueError):
    """Kafka's ConfigException: settings that cannot work together."""
    error = Errors.INVALID_CONFIG


class ProducerError(KafkaError):
    """A record's send failed (raised by ProducedRecord.get()), or the producer cannot do what
    it was asked (send after close, a partition the topic does not have). `kafka_name` is the
    record's error; INVALID_REQUEST when none applies (as ClusterError, its old base, said)."""
    error = Errors.INVALID_REQUEST

    def __init__(self, message: str, kafka_name: str = Errors.INVALID_REQUEST) -> None:
        super().__init__(message, error=kafka_name)


@dataclass(frozen=True)
class ProducerConfig:
    """The producer's settings: Kafka's names with dots as underscores, Kafka's defaults."""
    acks: int = -1
    enable_idempotence: bool = True
    batch_size: int = 16384
    linger_ms: int = 5                   # Kafka 4.0 (KIP-1030); 0 in Kafka 3.x
    buffer_memory: int = 33554432
    max_block_ms: int = 60000
    max_request_size: int = 1048576
    compression_type: str = "none"
    compression_gzip_level: int = -1     # KIP-390 (Kafka 3.8): Deflater's default, 6
    compression_lz4_level: int = 9
    compression_zstd_level: int = 3
    max_in_flight_requests_per_connection: int = 5
    retries: int = 2147483647
    retry_backoff_ms: int = 100
    retry_backoff_max_ms: int = 1000
    delivery_timeout_ms: int = 120000
    request_timeout_ms: int = 30000
    metadata_max_age_ms: int = 300000
    partitioner_class: str = "sticky"
    partitioner_ignore_keys: bool = False
    partitioner_adaptive_partitioning_enable: bool = True

    def to_dict(self) -> dict:
        # A codec's level is listed only with that codec: it is the one Kafka reads, and the
        # uncompressed producers of the recorded scenarios keep their ProducerCreated events.
        unused = {r.config for c, r in compression.LEVELS.items()
                  if compression.CODEC_NAMES[c] != self.compression_type}
        out = {key: getattr(self, f.name) for f in fields(self)
               if (key := f.name.replace("_", ".")) not in unused}
        out["acks"] = "all" if self.acks == -1 else str(self.acks)
        return out

    @property
    def compression_codec(self) -> int:
        """compression.type as the batch attribute's codec id."""
        return compression.CODEC_IDS[self.compression_type]

    @property
    def compression_level(self) -> int | None:
        """The chosen codec's compression.<codec>.level (None: snappy and none have no level)."""
        bounds = compression.LEVELS.get(self.compression_codec)
        return None if bounds is None else getattr(self, bounds.config.replace(".", "_"))


_KAFKA_NAMES = {f.name.replace("_", "."): f.name for f in fields(ProducerConfig)}


def resolve_config(config: dict | None) -> tuple[ProducerConfig, list[str]]:
    """Kafka's ProducerConfig post-processing: parse, validate, settle idempotence and timeouts."""
    given = dict(config or {})
    warnings = [f"'{key}' is accepted but not modelled by the lab" for key in sorted(given) if key in NOT_MODELLED]
    unknown = sorted(k for k in given if k not in _KAFKA_NAMES and k not in NOT_MODELLED)
    if unknown:
        raise ProducerConfigError(f"Unknown producer config {', '.join(map(repr, unknown))} "
                                  f"(known: {', '.join(sorted(_KAFKA_NAMES))})")
    values: dict[str, Any] = {name: _parse(key, given[key], getattr(ProducerConfig, name))
              for key, name in _KAFKA_NAMES.items() if key in given}
    _validate(values)
    values.update(_delivery_timeout(values, "delivery.timeout.ms" in given, warnings))
    values["enable_idempotence"] = _idempotence(values, "enable.idempotence" in given, warnings)
    return ProducerConfig(**values), warnings


def _parse(key: str, value: object, default: object) -> object:
    if key == "acks":
        if value in ("all", "-1", -1):
            return -1
        if value in (0, 1, "0", "1"):
            return int(value)
        raise ProducerConfigError(f"Invalid value {value!r} for configuration acks: must be all, -1, 0 or 1")
    kind = "bool" if isinstance(default, bool) else "int" if isinstance(default, int) else "str"
    return parse_config_value(key, value, kind, ProducerConfigError)


def _validate(values: dict) -> None:
    defaults = ProducerConfig()
    for name in ("batch_size", "linger_ms", "buffer_memory", "max_block_ms", "max_request_size", "retries",
                 "retry_backoff_ms", "retry_backoff_max_ms", "delivery_timeout_ms", "request_timeout_ms",
                 "metadata_max_age_ms"):
        if values.get(name, 0) < 0:
            raise ProducerConfigError(f"Invalid value {values[name]} for configuration "
                                      f"{name.replace('_', '.')}: must be at least 0")
    if values.get("max_in_flight_requests_per_connection", 1) < 1:
        raise ProducerConfigError("max.in.flight.requests.per.connection must be at least 1")
    values["compression_type"] = compression.parse_codec(
        values.get("compression_type", defaults.compression_type), "compression.type", ProducerConfigError)
    for codec, bounds in compression.LEVELS.items():   # CompressionType.levelValidator, for every level given
        name = bounds.config.replace(".", "_")
        if name in values:
            compression.check_level(codec, values[name], ProducerConfigError)
    if values.get("partitioner_class") is None:
        values["partitioner_class"] = defaults.partitioner_class
    if values["partitioner_class"] not in PARTITIONERS:
        raise ProducerConfigError(f"partitioner.class must be one of {', '.join(PARTITIONERS)}, "
                                  f"not {values['partitioner_class']!r}")


def _delivery_timeout(values: dict, explicit: bool, warnings: list[str]) -> dict:
    defaults = ProducerConfig()
    delivery = values.get("delivery_timeout_ms", defaults.delivery_timeout_ms)
    floor = values.get("linger_ms", defaults.linger_ms) + values.get("request_timeout_ms", defaults.request_timeout_ms)
    if delivery >= floor:
        return {}
    if explicit:
        raise ProducerConfigError(f"delivery.timeout.ms ({delivery}) must be at least linger.ms + "
                                  f"request.timeout.ms ({floor})")
    warnings.append(f"delivery.timeout.ms raised to linger.ms + request.timeout.ms = {floor}")
    return {"delivery_timeout_ms": floor}


def _idempotence(values: dict, explicit: bool, warnings: list[str]) -> bool:
    defaults = ProducerConfig()
    if not values.get("enable_idempotence", defaults.enable_idempotence):
        return False
    conflicts = []
    if values.get("retries", defaults.retries) == 0:
        conflicts.append("retries is 0")
    if values.get("acks", defaults.acks) != -1:
        conflicts.append(f"acks is {values['acks']}, not all")
    in_flight = values.get("max_in_flight_requests_per_connection", defaults.max_in_flight_requests_per_connection)
    if in_flight > MAX_IN_FLIGHT_FOR_IDEMPOTENCE:
        conflicts.append(f"max.in.flight.requests.per.connection is {in_flight}, more than 5")
    if not conflicts:
        return True
    if explicit:
        raise ProducerConfigError(f"enable.idempotence=true cannot work because {' and '.join(conflicts)}")
    warnings.append(f"Idempotence is disabled because {' and '.join(conflicts)} "
                    f"(enable.idempotence was left at its default; Kafka 4.0 refuses more than 5 in flight)")
    return False


@dataclass(eq=False, slots=True)
class ProducedRecord:
    """One record sent by a Producer, and what became of it (Kafka's Future<RecordMetadata>).

    Its fields hold atomic values (bytes, str, int, None, a tuple of header pairs): one with no
    headers and no tag (or an atomic tag) is left out of the cyclic garbage collector when the
    C extension is built (engine.storage._columnar.untrack_atomic), as the read path leaves out
    its records: a producer's hundreds of thousands of pending records cost the collector more
    than sending them. (A tag that refers back to its record would then make a cycle the
    collector never frees; nothing in the engine does that.)"""
    producer: str
    record_id: int
    topic: str
    partition: int
    key: bytes | None
    value: bytes | None
    timestamp: int
    headers: tuple = ()
    tag: object = None
    acks: int = -1
    acked: bool | None = None     # None while under way (or never answered: the producer crashed)
    offset: int = -1
    error: str | None = None      # Kafka's error name (or BUFFER_EXHAUSTED, PRODUCER_CRASHED, ...)
    error_message: str | None = None
    attempts: int = 0             # how many times its batch was sent

    @property
    def done(self) -> bool:
        return self.acked is not None

    def get(self) -> int:
        """The offset, as Future.get() gives it; raises ProducerError if the send failed."""
        if self.acked is None:
            raise ProducerError(f"Record {self.record_id} of {self.producer} is not complete "
                                f"({self.error or 'under way'}); flush() first")
        if not self.acked:
            raise ProducerError(self.error_message or self.error or "send failed",
                                self.error or Errors.UNKNOWN_SERVER_ERROR)
        return self.offset

    def to_dict(self) -> dict:
        return {"producer": self.producer, "record_id": self.record_id, "step": self.tag, "request_id": None,
                "topic": self.topic, "partition": self.partition, "key": ev.text(self.key),
                "value": ev.text(self.value), "acks": self.acks, "acked": self.acked, "offset": self.offset,
                "error": self.error, "error_message": self.error_message, "attempts": self.attempts}


# Why a record cannot enter the accumulator yet (Producer._place).
NEEDS_METADATA = "metadata"
NEEDS_MEMORY = "memory"


class _Route(NamedTuple):
    """What placing a record of a known topic reads from the producer's metadata and clock; fixed
    while the scheduler does not run, so send_batch() looks it up once for all its records."""
    partition_count: int          # the topic's partitions (not `count`: that is tuple.count)
    available: Sequence[int]      # those with a leader
    now_ms: int
    partitioner: NullKeyPartitioner | None   # the topic's null-key partitioner, if it has one yet


@dataclass(eq=False)
class _Waiting:
    """A record send() could not put in the accumulator yet."""
    record: ProducedRecord
    partition: int | None          # the explicit partition asked for, if any
    deadline_ms: int               # max.block.ms after send()
    needs_metadata: bool = False
    needs_memory: bool = False


class Producer:
    def __init__(self, world: World, name: str, config: dict | None = None, *, bootstrap: list[int]) -> None:
        """A client node "producer-<name>" in `world`. `bootstrap` is its bootstrap.servers: the
        broker ids it asks for metadata until a MetadataResponse names the cluster's brokers."""
        self.name = name
        self.node = f"producer-{name}"
        self.bootstrap = sorted(bootstrap)
        self.given_config = dict(config or {})
        self.config, self.warnings = resolve_config(config)
        self.client = Node(world, self.node)
        self.accumulator = RecordAccumulator(self.config, self.client.rng(f"{self.node}/partitioner"),
                                             self.client.rng(f"{self.node}/retry-backoff"))
        self.sender = Sender(self)
        self.closed = False
        self.crashed = False
        self._records = ProducedLog()   # bounded: the newest sends and the unanswered ones (engine/produced_log.py)
        self._waiting: deque[_Waiting] = deque()
        self.publish(ev.ProducerCreated(producer=self.node, config=self.config.to_dict(),
                                        warnings=list(self.warnings)))
        self.sender.wakeup(foreground=True)   # metadata (and, for idempotence, a producer id) at once

    # -- plumbing for the sender ----------------------------------------------------------------
    @property
    def now_ms(self) -> int:
        return self.client.now_ms

    def publish(self, event: ev.Event) -> None:
        self.client.publish(event)

    def schedule(self, delay_ms: int, action: Callable[[], None], label: str, *, foreground: bool = True):
        """A timer of this producer's process (a crash drops it)."""
        return self.client.schedule(delay_ms, action, label, foreground=foreground)

    # -- the API --------------------------------------------------------------------------------
    def send(self, topic: str, key: bytes | str | None, value: bytes | str | None, *,
             partition: int | None = None, headers: list | tuple | None = None,
             timestamp: int | None = None, tag: object = None) -> ProducedRecord:
        """Hand a record to the producer; it comes back at once and is answered later (`flush`).

        The record goes into the accumulator now if the producer knows the topic's partitions and
        has the memory; otherwise it waits, behind any record already waiting, as a blocked
        send() would, and fails if that lasts max.block.ms. A record too large, or for a
        partition the topic does not have, fails at once."""
        self._check_send(partition)
        record = ProducedRecord(self.node, self._records.sent + 1, topic, -1, _utf8(key), _utf8(value),
                                self.client.record_time_ms() if timestamp is None else int(timestamp),
                                tuple((k, _utf8(v)) for k, v in headers) if headers else (), tag, self.config.acks)
        if _untrack_atomic is not None:
            _untrack_atomic(record)
        self._take(record, partition, self.now_ms + self.config.max_block_ms)
        return record

    def send_batch(self, topic: str, records: Iterable[tuple], *, partition: int | None = None,
                   timestamp: int | None = None, tag: object = None) -> list[ProducedRecord]:
        """`send(topic, key, value, partition=, timestamp=, tag=)` for each (key, value) of
        `records`, in order, in one call — the batch-at-a-time way in, for an application that
        has its records in hand (a connector's poll, a file). Each record takes the path send()
        gives it (partitioner, accumulator, memory and metadata waits); only the per-call work
        (the checks, the clock) is done once. Same records, partitions, batches and events as
        that many send() calls at this instant."""
        self._check_send(partition)
        node, acks, log, take, untrack = self.node, self.config.acks, self._records, self._take, _untrack_atomic
        record_time = self.client.record_time_ms() if timestamp is None else int(timestamp)
        deadline = self.now_ms + self.config.max_block_ms
        route = self._route(topic)
        out = []
        for key, value in records:
            if isinstance(key, str) or isinstance(value, str):   # text: UTF-8, as send() has it
                key, value = _utf8(key), _utf8(value)
            record = ProducedRecord(node, log.sent + 1, topic, -1, key, value, record_time, (), tag, acks)
            if untrack is not None:
                untrack(record)
            take(record, partition, deadline, route)
            out.append(record)
        return out

    def _route(self, topic: str) -> _Route | None:
        """The metadata and clock a record of `topic` is placed with, now; None while the topic is
        unknown (then each record finds that out in _place, which asks for it)."""
        metadata = self.sender.metadata
        count = metadata.partition_count(topic)
        if count is None:
            return None
        return _Route(count, metadata.available_partitions(topic), self.now_ms,
                      self.accumulator.partitioners.get(topic))

    def _check_send(self, partition: int | None) -> None:
        if self.closed or self.crashed:
            raise ProducerError(f"Cannot send after {self.node} was {'closed' if self.closed else 'crashed'}")
        if partition is not None and partition < 0:
            raise ProducerError(f"Invalid partition: {partition}", Errors.INVALID_REQUEST)

    def _take(self, record: ProducedRecord, partition: int | None, deadline_ms: int,
              route: _Route | None = None) -> None:
        """A sent record: into the accumulator now, or to wait behind those already waiting."""
        self._records.append(record)
        if self._waiting:
            self._waiting.append(_Waiting(record, partition, deadline_ms))
            self.sender.wakeup()
        elif (wait := self._place(record, partition, route)) is not None:
            self._waiting.append(_Waiting(record, partition, deadline_ms, needs_metadata=wait == NEEDS_METADATA,
                                          needs_memory=wait == NEEDS_MEMORY))
            self.sender.wakeup()

    def partitions_for(self, topic: str) -> list[PartitionMetadata]:
        """Kafka's partitionsFor: the topic's partitions as this producer's metadata has them. A
        topic it does not know yet is asked for first, and the call blocks (the cluster runs) until
        the answer names it, up to max.block.ms — as the first send() to a topic would wait."""
        if self.closed or self.crashed:
            raise ProducerError(f"{self.node} was {'closed' if self.closed else 'crashed'}")
        metadata = self.sender.metadata
        if metadata.partition_count(topic) is None:
            metadata.wanted.add(topic)
            metadata.need_update = True
            self.sender.wakeup(foreground=True)
            known = self._block_until(lambda: metadata.partition_count(topic) is not None,
                                      self.now_ms + self.config.max_block_ms)
            if not any(w.record.topic == topic for w in self._waiting):
                metadata.wanted.discard(topic)
            if not known:
                raise ProducerError(f"Topic {topic} not present in metadata after {self.config.max_block_ms} ms.",
                                    Errors.REQUEST_TIMED_OUT)
        return list(metadata.topics[topic])

    def flush(self, max_ms: int | None = None) -> None:
        """Send everything now (linger.ms no longer waited for) and run the cluster until every
        record is answered. Bounded by delivery.timeout.ms, which fails whatever is left."""
        if self.crashed:
            return
        limit = max_ms if max_ms is not None else self.config.delivery_timeout_ms + self.config.request_timeout_ms
        self.accumulator.flushes_in_progress += 1
        self.sender.wakeup()
        try:
            done = self._block_until(lambda: not self.has_pending(), self.now_ms + limit)
        finally:
            self.accumulator.flushes_in_progress -= 1
        self._records.forget_answered()
        if not done:
            raise ProducerError(f"{self.node}: flush did not complete within {limit} ms")

    def close(self) -> None:
        """Kafka's close(): no new records; wait until every record is answered; stop."""
        if self.closed or self.crashed:
            return
        self.closed = self.accumulator.closed = True
        try:
            self.flush()
        finally:
            self.sender.stop()

    def crash(self) -> None:
        """The application dies: nothing under way is answered; records keep acked=None."""
        if self.crashed:
            return
        self.crashed = True
        self.sender.stop()
        self.client.go_down()

        def abandon(records) -> None:
            for record in records:
                record.error = Errors.PRODUCER_CRASHED
                record.error_message = "the producer crashed before an answer came back"
        self.accumulator.abort_all(lambda batch: abandon(batch.records))
        abandon(w.record for w in self._waiting)
        self._waiting.clear()

    def records(self) -> list[dict]:
        """The records sent that are kept (the newest PRODUCED_KEPT and every unanswered one), in
        the scenario runner's "produced" shape (plus producer fields)."""
        return [r.to_dict() for r in self._records]

    def produced(self) -> list[ProducedRecord]:
        """The sends kept (see records())."""
        return list(self._records)

    def sent_count(self) -> int:
        """Every record this producer sent, kept or not."""
        return len(self._records)

    def metrics(self) -> dict:
        """A few of Kafka's producer metrics, under Kafka's names."""
        queued = sum(len(dq) for dq in self.accumulator.batches.values())
        return {**self.sender.stats,
                "records-acknowledged-total": self._records.acked_left_out + sum(1 for r in self._records if r.acked),
                "requests-in-flight": self.sender.requests_in_flight(),
                "batches-in-accumulator": queued,
                "buffer-total-bytes": self.config.buffer_memory,
                "buffer-available-bytes": self.accumulator.available_memory,
                "producer-id": self.sender.idempotence.producer_id if self.sender.idempotence else -1,
                "producer-epoch": self.sender.idempotence.producer_epoch if self.sender.idempotence else -1}

    def has_pending(self) -> bool:
        """Records not answered yet: waiting to enter the accumulator, in it, or in flight."""
        return bool(self._waiting) or self.accumulator.has_incomplete()

    # -- records waiting to enter the accumulator (a blocked send() in Kafka) ---------------------
    def place_waiting(self) -> None:
        """The sender's turn: place the waiting records that now can, in order; fail those whose
        max.block.ms ran out."""
        now = self.now_ms
        while self._waiting:
            head = self._waiting[0]
            wait = self._place(head.record, head.partition)
            if wait is not None:
                head.needs_metadata = wait == NEEDS_METADATA
                if wait == NEEDS_MEMORY:
                    head.needs_memory = True
                if now < head.deadline_ms:
                    break
                self._give_up(head)
            self._waiting.popleft()
            self.sender.metadata.wanted.discard(head.record.topic)
        self.accumulator.waiters = 1 if self._waiting and self._waiting[0].needs_memory else 0
        self.sender.metadata.wanted.update(w.record.topic for w in self._waiting if w.needs_metadata)

    def next_block_deadline(self) -> int | None:
        return self._waiting[0].deadline_ms if self._waiting else None

    def _place(self, record: ProducedRecord, partition: int | None, route: _Route | None = None) -> str | None:
        """Partition the record (`partition`: the one send() was given, if any) and append it, or
        refuse it; NEEDS_METADATA or NEEDS_MEMORY when it must wait instead. `route`: the topic's
        _route(), if the caller has it already."""
        topic = record.topic
        if route is None:
            route = self._route(topic)
            if route is None:
                metadata = self.sender.metadata
                metadata.wanted.add(topic)
                metadata.need_update = True
                return NEEDS_METADATA
        count, available = route.partition_count, route.available
        config, accumulator = self.config, self.accumulator
        size = record_size_upper_bound(record.key, record.value, record.headers)
        sticky = partition is None and (record.key is None or config.partitioner_ignore_keys)
        partitioner = (route.partitioner or accumulator.null_key_partitioner(topic)) if sticky else None
        if record.partition < 0:
            if partition is not None and partition >= count:
                record.partition = partition
                self._refuse(record, Errors.UNKNOWN_TOPIC_OR_PARTITION,
                             f"Partition {partition} of topic {topic} does not exist "
                             f"(it has {count} partitions)")
                return None
            if partitioner is not None:   # choose_partition's null-key branch, without the detour
                record.partition = partitioner.partition(available, count)
            else:
                record.partition = self._choose(record, partition, count)
            if size > config.max_request_size or size > config.buffer_memory:
                limit, name = min((config.max_request_size, "max.request.size"),
                                  (config.buffer_memory, "buffer.memory"))
                self._refuse(record, Errors.MESSAGE_TOO_LARGE, f"The message is {size} bytes when serialized, "
                             f"which is larger than {limit}, the value of the {name} configuration.")
                return None
        tp = (topic, record.partition)
        # Memory first: with room for a new batch (the usual case) the open batch need not be sized.
        if accumulator.available_memory < accumulator.new_batch_capacity(record, size) and \
                not accumulator.fits_open_batch(tp, record):
            return NEEDS_MEMORY
        self._append(record, tp, route, partitioner)
        return None

    def _give_up(self, waiting: _Waiting) -> None:
        record = waiting.record
        if waiting.needs_metadata:
            self._refuse(record, Errors.REQUEST_TIMED_OUT,
                         f"Topic {record.topic} not present in metadata after {self.config.max_block_ms} ms.")
        else:
            need = self.accumulator.new_batch_capacity(record)
            self._refuse(record, Errors.BUFFER_EXHAUSTED,
                         f"Failed to allocate {need} bytes within max.block.ms={self.config.max_block_ms} ms "
                         f"(buffer.memory={self.config.buffer_memory}, available "
                         f"{self.accumulator.available_memory})")

    def _append(self, record: ProducedRecord, tp: tuple[str, int], route: _Route,
                partitioner: NullKeyPartitioner | None) -> None:
        """Into the accumulator; a record the null-key `partitioner` placed then tells it how many
        bytes went to its partition (of the topic's partitions, the available ones: `route`)."""
        batch, created, appended = self.accumulator.append(tp, record, route.now_ms)
        full = batch.is_full()   # `batch` is the partition's last: this is all_batches_full(tp)
        if partitioner is not None:
            partitioner.on_append(appended, route.available, route.partition_count, full)   # enable_switch=full
        if created or full:
            self.sender.wakeup()

    def _choose(self, record: ProducedRecord, partition: int | None, count: int) -> int:
        metadata = self.sender.metadata
        return choose_partition(range(count), record.key, partition,
                                null_key_partitioner=self.accumulator.null_key_partitioner(record.topic),
                                available_partitions=metadata.available_partitions(record.topic),
                                ignore_keys=self.config.partitioner_ignore_keys)

    def _refuse(self, record: ProducedRecord, error: str, message: str) -> None:
        record.acked, record.error, record.error_message = False, error, message
        self.sender.stats["record-error-total"] += 1
        self.publish(ev.ProducerBatchFailed(producer=self.node, topic=record.topic, partition=record.partition,
                                            error=error, message=message, records_count=1, attempts=0))

    def _block_until(self, condition: Callable[[], bool], deadline: int) -> bool:
        """Run the world's scheduler until `condition` holds or virtual time reaches `deadline`."""
        return self.client.world.scheduler.run(until_ms=deadline, stop=condition)


def _utf8(data: bytes | str | None) -> bytes | None:
    return data.encode("utf-8") if isinstance(data, str) else data
