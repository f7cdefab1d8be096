"""The producer's RecordAccumulator: records wait here, in batches, until the sender takes them.

One deque of batches per partition. `send()` appends a record to the last batch of its
partition's deque, or starts a new batch there when the record does not fit (`batch.size`
bytes; a larger record gets a batch of its own size). Every new batch takes its capacity from
`buffer.memory`, and gives it back when the batch completes (acknowledged, failed or expired).

The sender asks `ready()` which leaders have something to send. A partition's first batch is
sendable when it is full (or not the last in its deque), has waited `linger.ms`, memory is
exhausted (a record waits for buffer.memory), a flush is under way or the producer is closing;
a batch being retried waits out its backoff first (`retry.backoff.ms`, doubling per attempt up
to `retry.backoff.max.ms`, ±20 % jitter), unless its partition's leader changed meanwhile
(KIP-951).
`drain()` then takes at most one batch per partition for each ready leader, up to
`max.request.size` bytes per request, going round the leader's partitions from where the last
drain stopped so no partition starves.

Invariants: batches of one partition leave in deque order; a retried batch goes back to the
front of its deque (in sequence order for an idempotent producer), so a later batch of the same
partition never leaves before it; memory in use = the capacity of every incomplete batch.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Protocol

from engine.clients.partitioner import NullKeyPartitioner, RoundRobinPartitioner, StickyPartitioner
from engine.storage import record_batch as rb
from engine.storage.varint import SMALL_VARINT_MAX, SMALL_VARINT_SIZES, size_of_varint

if TYPE_CHECKING:
    import random

    from engine.clients.producer import ProducedRecord, ProducerConfig

TopicPartition = tuple[str, int]
# A compressed batch's size is estimated from its uncompressed records (MemoryRecordsBuilder
# .estimatedBytesWritten): records x the topic's estimated ratio x this margin. The ratio starts at
# 1.0 per topic and learns from each batch built (CompressionRatioEstimator: up by at least 0.05
# when a batch compressed worse than estimated, down by at most 0.005 when better).
COMPRESSION_RATE_ESTIMATION_FACTOR = 1.05
COMPRESSION_RATIO_IMPROVING_STEP = 0.005
COMPRESSION_RATIO_DETERIORATE_STEP = 0.05
MAX_RECORD_OVERHEAD = 21     # length 5 + attributes 1 + timestampDelta 10 + offsetDelta 5 (DefaultRecord)
NULL_VARINT_SIZE = 1


def record_size_upper_bound(key: bytes | None, value: bytes | None, headers: Sequence[tuple]) -> int:
    """Kafka's estimateSizeInBytesUpperBound for one record in a v2 batch: header + worst case."""
    sizes = SMALL_VARINT_SIZES   # every send() asks: one- and two-byte varints by table
    if not headers and len(key or b"") < SMALL_VARINT_MAX and len(value or b"") < SMALL_VARINT_MAX:
        return (rb.RECORD_BATCH_OVERHEAD + MAX_RECORD_OVERHEAD + sizes[0]
                + (NULL_VARINT_SIZE if key is None else sizes[len(key)] + len(key))
                + (NULL_VARINT_SIZE if value is None else sizes[len(value)] + len(value)))
    size = (rb.RECORD_BATCH_OVERHEAD + MAX_RECORD_OVERHEAD
            + (NULL_VARINT_SIZE if key is None else size_of_varint(len(key)) + len(key))
            + (NULL_VARINT_SIZE if value is None else size_of_varint(len(value)) + len(value)))
    size += size_of_varint(len(headers))
    for header_key, header_value in headers:
        encoded = header_key.encode("utf-8")
        size += size_of_varint(len(encoded)) + len(encoded) + _nullable_size(header_value)
    return size


def _nullable_size(data: bytes | None) -> int:
    return NULL_VARINT_SIZE if data is None else size_of_varint(len(data)) + len(data)


class ProducerBatch:
    """Records for one partition that travel together, with their send history."""

    def __init__(self, topic: str, partition: int, created_ms: int, capacity: int) -> None:
        self.topic = topic
        self.partition = partition
        self.created_ms = created_ms
        self.capacity = capacity                 # bytes taken from buffer.memory
        self.records: list[ProducedRecord] = []
        self.size_in_bytes = rb.RECORD_BATCH_OVERHEAD
        self.closed = False                      # a record did not fit: no more appends
        self.attempts = 0                        # retries so far (Kafka's batch.attempts())
        self.last_attempt_ms = created_ms
        self.retry_backoff_ms = 0
        self.producer_id = rb.NO_PRODUCER_ID
        self.producer_epoch = rb.NO_PRODUCER_EPOCH
        self.base_sequence = rb.NO_SEQUENCE
        self.leader_epoch = -1                   # the leader's epoch when last sent
        self.in_flight = False                   # in a request awaiting its answer
        self.done = False
        self.compression_ratio: float | None = None   # the estimate it was created with; None: uncompressed
        self._encoded: tuple[tuple, bytes] | None = None

    @property
    def tp(self) -> TopicPartition:
        return self.topic, self.partition

    @property
    def record_count(self) -> int:
        return len(self.records)

    @property
    def has_sequence(self) -> bool:
        return self.base_sequence != rb.NO_SEQUENCE

    @property
    def last_sequence(self) -> int:
        return self.base_sequence + self.record_count - 1

    def estimated_size(self) -> int:
        """Bytes on the wire: exact uncompressed, estimated compressed (estimatedBytesWritten)."""
        if self.compression_ratio is None:
            return self.size_in_bytes
        records = self.size_in_bytes - rb.RECORD_BATCH_OVERHEAD
        return rb.RECORD_BATCH_OVERHEAD + int(records * self.compression_ratio * COMPRESSION_RATE_ESTIMATION_FACTOR)

    def is_full(self) -> bool:
        return self.closed or (bool(self.records) and self.estimated_size() >= self.capacity)

    def try_append(self, record: ProducedRecord) -> int:
        """Add the record if it fits (the first record always does): the bytes it added. 0 if it
        does not fit (the batch is then closed) or the batch was closed."""
        if self.closed:
            return 0
        records = self.records
        base_timestamp = records[0].timestamp if records else record.timestamp
        size = rb.record_size(record.key, record.value, record.headers, len(records),
                              record.timestamp - base_timestamp)
        # hasRoomFor: the estimate so far plus the new record, uncompressed
        used = self.size_in_bytes if self.compression_ratio is None else self.estimated_size()
        if records and used + size > self.capacity:
            self.closed = True
            return 0
        records.append(record)
        self.size_in_bytes += size
        return size

    def waited_ms(self, now_ms: int) -> int:
        return max(0, now_ms - self.last_attempt_ms)

    def encode(self, compression: int, level: int | None = None) -> bytes:
        """The v2 batch as it goes on the wire (kept, so a retry sends the same bytes)."""
        key = (self.producer_id, self.producer_epoch, self.base_sequence, compression, level)
        if self._encoded is None or self._encoded[0] != key:
            body = [(r.key, r.value, r.timestamp, r.headers) for r in self.records]
            self._encoded = key, rb.encode_batch(body, base_timestamp=self.records[0].timestamp,
                                                 producer_id=self.producer_id, producer_epoch=self.producer_epoch,
                                                 base_sequence=self.base_sequence, compression=compression,
                                                 compression_level=level)
        return self._encoded[1]

    def __repr__(self) -> str:
        return (f"ProducerBatch({self.topic}-{self.partition}, {self.record_count} records, "
                f"seq {self.base_sequence}, attempts {self.attempts})")


class ClusterView(Protocol):
    """What the accumulator needs to know of the producer's metadata."""

    def leader_for(self, tp: TopicPartition) -> int | None: ...
    def leader_epoch_for(self, tp: TopicPartition) -> int: ...
    def partitions_for_node(self, node: int) -> list[TopicPartition]: ...
    def partition_count(self, topic: str) -> int | None: ...
    def available_partitions(self, topic: str) -> Sequence[int]: ...


class Sequencer(Protocol):
    """The idempotence bookkeeping the drain consults (Kafka's TransactionManager)."""

    def should_stop_drain(self, first: ProducerBatch) -> bool: ...
    def assign_sequence(self, batch: ProducerBatch) -> None: ...


class ReadyCheck:
    def __init__(self) -> None:
        self.ready_nodes: set[int] = set()
        self.next_ready_check_delay_ms: int | None = None
        self.unknown_leader_topics: set[str] = set()

    def wait_at_most(self, delay_ms: int) -> None:
        if self.next_ready_check_delay_ms is None or delay_ms < self.next_ready_check_delay_ms:
            self.next_ready_check_delay_ms = delay_ms


class RecordAccumulator:
    def __init__(self, config: ProducerConfig, partitioner_rng: random.Random,
                 backoff_rng: random.Random) -> None:
        self.config = config
        self.batches: dict[TopicPartition, deque[ProducerBatch]] = {}
        self.incomplete: dict[ProducerBatch, None] = {}   # in creation order; a dict: O(1) removal
        self.partitioners: dict[str, NullKeyPartitioner] = {}
        self.muted: set[TopicPartition] = set()
        self.used_memory = 0
        self.waiters = 0                 # records waiting for buffer.memory (Kafka: blocked send() calls)
        self.flushes_in_progress = 0
        self.closed = False
        self._partitioner_rng = partitioner_rng
        self._backoff_rng = backoff_rng
        self._drain_index: dict[int, int] = {}
        self.compression_ratios: dict[str, float] = {}   # per topic, for the producer's one codec

    # -- memory ---------------------------------------------------------------------------
    @property
    def available_memory(self) -> int:
        return self.config.buffer_memory - self.used_memory

    def deallocate(self, batch: ProducerBatch) -> None:
        if batch in self.incomplete:
            del self.incomplete[batch]
            self.used_memory -= batch.capacity

    def has_incomplete(self) -> bool:
        return bool(self.incomplete)

    # -- partitioning -----------------------------------------------------------------------
    def null_key_partitioner(self, topic: str) -> NullKeyPartitioner:
        partitioner = self.partitioners.get(topic)
        if partitioner is None:
            if self.config.partitioner_class == "round-robin":
                partitioner = RoundRobinPartitioner(self._partitioner_rng)
            else:
                partitioner = StickyPartitioner(self._partitioner_rng, max(1, self.config.batch_size))
            self.partitioners[topic] = partitioner
        return partitioner

    # -- append -----------------------------------------------------------------------------
    def new_batch_capacity(self, record: ProducedRecord, upper_bound: int | None = None) -> int:
        """batch.size, or more for a larger record; `upper_bound`: its record_size_upper_bound, if known."""
        if upper_bound is None:
            upper_bound = record_size_upper_bound(record.key, record.value, record.headers)
        return max(self.config.batch_size, upper_bound)

    def fits_open_batch(self, tp: TopicPartition, record: ProducedRecord) -> bool:
        dq = self.batches.get(tp)
        if not dq or dq[-1].closed:
            return False
        last = dq[-1]
        base_timestamp = last.records[0].timestamp
        size = rb.record_size(record.key, record.value, record.headers, len(last.records),
                              record.timestamp - base_timestamp)
        return last.estimated_size() + size <= last.capacity

    def append(self, tp: TopicPartition, record: ProducedRecord, now_ms: int) -> tuple[ProducerBatch, bool, int]:
        """Append to the partition's last batch, or to a new one (the caller checked memory).
        Returns (batch, new batch created, bytes appended)."""
        dq = self.batches.get(tp)
        if dq is None:
            dq = self.batches[tp] = deque()
        elif dq:
            last = dq[-1]
            appended = last.try_append(record)   # 0: closed, or closed now
            if appended:
                return last, False, appended
        batch = ProducerBatch(tp[0], tp[1], now_ms, self.new_batch_capacity(record))
        if self.config.compression_type != "none":
            batch.compression_ratio = self.compression_ratios.get(tp[0], 1.0)
        batch.try_append(record)
        dq.append(batch)
        self.incomplete[batch] = None
        self.used_memory += batch.capacity
        return batch, True, batch.size_in_bytes

    def update_compression_ratio(self, batch: ProducerBatch, encoded_size: int) -> None:
        """CompressionRatioEstimator.updateEstimation, with a batch just built (ProducerBatch.close)."""
        if batch.compression_ratio is None:
            return
        observed = encoded_size / max(1, batch.size_in_bytes - rb.RECORD_BATCH_OVERHEAD)
        current = self.compression_ratios.get(batch.topic, 1.0)
        if observed > current:
            self.compression_ratios[batch.topic] = max(current + COMPRESSION_RATIO_DETERIORATE_STEP, observed)
        elif observed < current:
            self.compression_ratios[batch.topic] = max(current - COMPRESSION_RATIO_IMPROVING_STEP, observed)

    def all_batches_full(self, tp: TopicPartition) -> bool:
        dq = self.batches.get(tp)
        return not dq or dq[-1].is_full()

    # -- the sender's side ----------------------------------------------------------------
    def _backing_off(self, batch: ProducerBatch, cluster: ClusterView, now_ms: int) -> bool:
        if batch.attempts == 0 or batch.waited_ms(now_ms) >= batch.retry_backoff_ms:
            return False
        return not cluster.leader_epoch_for(batch.tp) > batch.leader_epoch >= 0   # KIP-951

    def ready(self, cluster: ClusterView, now_ms: int) -> ReadyCheck:
        result = ReadyCheck()
        exhausted = self.waiters > 0
        for tp, dq in self.batches.items():
            if not dq:
                continue
            leader = cluster.leader_for(tp)
            if leader is None:
                result.unknown_leader_topics.add(tp[0])
                continue
            if leader in result.ready_nodes or tp in self.muted:
                continue
            first = dq[0]
            waited = first.waited_ms(now_ms)
            backing_off = self._backing_off(first, cluster, now_ms)
            time_to_wait = first.retry_backoff_ms if backing_off else self.config.linger_ms
            full = len(dq) > 1 or first.is_full()
            sendable = full or waited >= time_to_wait or exhausted or self.closed or self.flushes_in_progress > 0
            if sendable and not backing_off:
                result.ready_nodes.add(leader)
            else:
                result.wait_at_most(max(time_to_wait - waited, 0))
        self._update_load_stats(cluster)
        return result

    def _update_load_stats(self, cluster: ClusterView) -> None:
        """Adaptive partitioning input: queue sizes of the topic's partitions with a leader, once
        every partition has had a batch (as Kafka does; before that the choice stays uniform)."""
        if not self.config.partitioner_adaptive_partitioning_enable:
            return
        for topic, partitioner in self.partitioners.items():
            if not isinstance(partitioner, StickyPartitioner):
                continue
            count = cluster.partition_count(topic) or 0
            keys = [tp for tp in self.batches if tp[0] == topic]
            if count < 2 or len(keys) < count:
                partitioner.update_partition_load_stats(None)
                continue
            ids = [p for _, p in keys if cluster.leader_for((topic, p)) is not None]
            partitioner.update_partition_load_stats([len(self.batches[(topic, p)]) for p in ids], ids)

    def drain(self, cluster: ClusterView, nodes: Iterable[int], max_request_size: int, now_ms: int,
              sequencer: Sequencer | None) -> dict[int, list[ProducerBatch]]:
        return {node: self._drain_node(cluster, node, max_request_size, now_ms, sequencer)
                for node in sorted(nodes)}

    def _drain_node(self, cluster: ClusterView, node: int, max_size: int, now_ms: int,
                    sequencer: Sequencer | None) -> list[ProducerBatch]:
        parts = cluster.partitions_for_node(node)
        ready: list[ProducerBatch] = []
        if not parts:
            return ready
        start = index = self._drain_index.get(node, 0) % len(parts)
        size = 0
        while True:
            tp = parts[index]
            self._drain_index[node] = index
            index = (index + 1) % len(parts)
            dq = self.batches.get(tp)
            if tp not in self.muted and dq:
                first = dq[0]
                if not self._backing_off(first, cluster, now_ms):
                    if ready and size + first.estimated_size() > max_size:
                        break
                    if sequencer is not None and sequencer.should_stop_drain(first):
                        break
                    dq.popleft()
                    if sequencer is not None and not first.has_sequence:
                        sequencer.assign_sequence(first)
                    first.closed = True
                    size += first.estimated_size()
                    ready.append(first)
            if index == start:
                break
        return ready

    def expired_batches(self, now_ms: int) -> list[ProducerBatch]:
        """Batches still waiting here whose delivery.timeout.ms has passed, oldest first."""
        expired = []
        for dq in self.batches.values():
            while dq and now_ms - dq[0].created_ms >= self.config.delivery_timeout_ms:
                batch = dq.popleft()
                batch.closed = True
                expired.append(batch)
        return expired

    def next_expiry_ms(self) -> int | None:
        """When the oldest batch not yet sent reaches delivery.timeout.ms."""
        firsts = [dq[0].created_ms for dq in self.batches.values() if dq]
        return min(firsts) + self.config.delivery_timeout_ms if firsts else None

    def reenqueue(self, batch: ProducerBatch, now_ms: int, *, in_sequence_order: bool) -> int:
        """Put a batch back for a retry; returns its backoff."""
        batch.attempts += 1
        batch.last_attempt_ms = now_ms
        batch.retry_backoff_ms = self.backoff_ms(batch.attempts - 1)
        dq = self.batches.setdefault(batch.tp, deque())
        if in_sequence_order and batch.has_sequence:
            position = 0
            while position < len(dq) and dq[position].has_sequence and dq[position].base_sequence < batch.base_sequence:
                position += 1
            dq.insert(position, batch)
        else:
            dq.appendleft(batch)
        return batch.retry_backoff_ms

    def backoff_ms(self, attempts: int) -> int:
        """Kafka's ExponentialBackoff(retry.backoff.ms, x2, retry.backoff.max.ms, jitter 0.2)."""
        initial, maximum = self.config.retry_backoff_ms, self.config.retry_backoff_max_ms
        if maximum <= initial:
            return initial
        term = initial * (2 ** min(attempts, 64))
        value = int(self._backoff_rng.uniform(0.8, 1.2) * term)
        return min(value, maximum)

    def abort_all(self, on_abort: Callable[[ProducerBatch], None]) -> None:
        for batch in list(self.incomplete):
            dq = self.batches.get(batch.tp)
            if dq and batch in dq:
                dq.remove(batch)
            on_abort(batch)
            self.deallocate(batch)
