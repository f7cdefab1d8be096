"""How the Java producer picks a partition for a record (KafkaProducer.partition + BuiltInPartitioner).

Kafka's order, applied by `choose_partition`:

1. an explicit partition on the record wins;
2. else, if the key is not null (and `partitioner.ignore.keys` is false), the key's hash picks one
   of ALL the topic's partitions, available or not: `toPositive(murmur2(key)) % numPartitions`;
3. else the null-key partitioner picks: `StickyPartitioner` (Kafka 3.3+, KIP-794, the default)
   or `RoundRobinPartitioner` (the null-key path of the pre-2.4 DefaultPartitioner).

Both null-key partitioners keep per-topic state, so use one instance per topic, and take their
randomness from an injected `random.Random` (Java's `ThreadLocalRandom.nextInt()` becomes
`rng.getrandbits(32)`). "Available" partitions are those with a leader, in metadata order.

The sticky partitioner follows the accumulator's protocol: `partition()` peeks the current sticky
partition, the caller appends the record there, then reports the bytes with `on_append()`, which
switches to a new partition once `batch.size` bytes went to the current one (or 2 x batch.size
when the caller disabled the switch because the partition's batch was not full yet).
The new partition is drawn uniformly from the available partitions and MAY be the same one again
(3.3+ does not exclude it; KIP-480's 2.4-3.2 cache did). Adaptive partitioning
(`partitioner.adaptive.partitioning.enable`) is off until the caller feeds queue sizes through
`update_partition_load_stats()`; then the draw is weighted by inverse queue length as in Kafka.
"""
from __future__ import annotations

import bisect
import random
from collections.abc import Sequence
from typing import Protocol

from engine.common.hashing import murmur2, to_int32, to_positive

DEFAULT_BATCH_SIZE_BYTES = 16384          # batch.size
_RANDOM_INT_BITS = 32


def partition_for_key(key: bytes, num_partitions: int) -> int:
    """BuiltInPartitioner.partitionForKey: the key's murmur2 hash over ALL `num_partitions`."""
    if num_partitions < 1:
        raise ValueError(f"num_partitions must be >= 1 but got {num_partitions}")
    return to_positive(murmur2(key)) % num_partitions


def _random_int(rng: random.Random) -> int:
    """Java's ThreadLocalRandom.nextInt(): a uniformly random signed int32."""
    return to_int32(rng.getrandbits(_RANDOM_INT_BITS))


class NullKeyPartitioner(Protocol):
    """Picks a partition for records without a key; one instance per topic."""

    def partition(self, available_partitions: Sequence[int], num_partitions: int) -> int:
        """The partition for the next record (available ones if any, else any of num_partitions)."""

    def on_append(self, appended_bytes: int, available_partitions: Sequence[int], num_partitions: int,
                  enable_switch: bool = True) -> None:
        """Told after each record appended to the partition `partition()` returned."""


class RoundRobinPartitioner:
    """The pre-2.4 DefaultPartitioner for null keys: a counter that starts at a random int.

    Each record takes `toPositive(counter++) % len(available)` (or `% num_partitions` when no
    partition is available). The counter is created on first use and wraps like a Java int.
    """

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng
        self._counter: int | None = None

    def _next_value(self) -> int:
        if self._counter is None:
            self._counter = _random_int(self._rng)
        value = self._counter
        self._counter = to_int32(value + 1)
        return value

    def partition(self, available_partitions: Sequence[int], num_partitions: int) -> int:
        next_value = to_positive(self._next_value())
        if available_partitions:
            return available_partitions[next_value % len(available_partitions)]
        return next_value % num_partitions

    def on_append(self, appended_bytes: int, available_partitions: Sequence[int], num_partitions: int,
                  enable_switch: bool = True) -> None:
        """Round robin moves on every record, so appended bytes do not matter."""


class _PartitionLoadStats:
    """A cumulative frequency table: partition i is drawn with weight (max queue + 1 - queue_i)."""

    def __init__(self, cumulative_frequency_table: list[int], partition_ids: list[int]) -> None:
        self.cumulative_frequency_table = cumulative_frequency_table
        self.partition_ids = partition_ids

    def pick(self, random_value: int) -> int:
        weighted_random = random_value % self.cumulative_frequency_table[-1]
        # the first entry strictly greater than weighted_random
        index = bisect.bisect_right(self.cumulative_frequency_table, weighted_random)
        return self.partition_ids[index]


def _build_load_stats(queue_sizes: Sequence[int], partition_ids: Sequence[int],
                      length: int) -> _PartitionLoadStats | None:
    """BuiltInPartitioner.updatePartitionLoadStats: None means "no adaptive logic, go uniform"."""
    if length < 1 or len(queue_sizes) < 2:
        return None
    considered = list(queue_sizes[:length])
    max_size_plus_1 = max(considered) + 1
    if len(set(considered)) == 1 and length == len(queue_sizes):
        return None
    table: list[int] = []
    running_sum = 0
    for size in considered:
        running_sum += max_size_plus_1 - size
        table.append(running_sum)
    return _PartitionLoadStats(table, list(partition_ids[:length]))


class StickyPartitioner:
    """Kafka 3.3+ BuiltInPartitioner (KIP-794 uniform sticky partitioning) for one topic."""

    def __init__(self, rng: random.Random, batch_size: int = DEFAULT_BATCH_SIZE_BYTES) -> None:
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1 but got {batch_size}")
        self._rng = rng
        self.batch_size = batch_size
        self.current_partition: int | None = None
        self.produced_bytes = 0
        self._load_stats: _PartitionLoadStats | None = None

    def _next_partition(self, available_partitions: Sequence[int], num_partitions: int) -> int:
        random_value = to_positive(_random_int(self._rng))
        if self._load_stats is not None:
            return self._load_stats.pick(random_value)
        if available_partitions:
            return available_partitions[random_value % len(available_partitions)]
        return random_value % num_partitions

    def partition(self, available_partitions: Sequence[int], num_partitions: int) -> int:
        """peekCurrentPartitionInfo: the sticky partition, choosing one on first use."""
        if self.current_partition is None:
            self._switch(available_partitions, num_partitions)
        assert self.current_partition is not None
        return self.current_partition

    def _switch(self, available_partitions: Sequence[int], num_partitions: int) -> None:
        self.current_partition = self._next_partition(available_partitions, num_partitions)
        self.produced_bytes = 0

    def on_append(self, appended_bytes: int, available_partitions: Sequence[int], num_partitions: int,
                  enable_switch: bool = True) -> None:
        """updatePartitionInfo: count the bytes; switch at batch.size (always at 2 x batch.size)."""
        if self.current_partition is None:
            raise RuntimeError("on_append() called before partition() chose a sticky partition")
        self.produced_bytes += appended_bytes
        enough = self.produced_bytes >= self.batch_size and enable_switch
        if enough or self.produced_bytes >= 2 * self.batch_size:
            self._switch(available_partitions, num_partitions)

    def update_partition_load_stats(self, queue_sizes: Sequence[int] | None,
                                    partition_ids: Sequence[int] = (),
                                    length: int | None = None) -> None:
        """Adaptive partitioning input: queue sizes of partitions with a leader (None turns it off).

        `length` counts the leading entries still considered (Kafka drops partitions slower
        than partitioner.availability.timeout.ms by shortening it); it defaults to all.
        """
        if queue_sizes is None:
            self._load_stats = None
            return
        if len(queue_sizes) != len(partition_ids):
            raise ValueError("queue_sizes and partition_ids must have the same length")
        considered = len(queue_sizes) if length is None else length
        self._load_stats = _build_load_stats(queue_sizes, partition_ids, considered)


def choose_partition(topic_partitions: Sequence[int], key: bytes | None,
                     explicit_partition: int | None = None, *,
                     null_key_partitioner: NullKeyPartitioner,
                     available_partitions: Sequence[int] | None = None,
                     ignore_keys: bool = False) -> int:
    """KafkaProducer.partition for one record of a topic whose partitions are `topic_partitions`.

    `available_partitions` (those with a leader) defaults to all of them. An explicit partition
    outside the topic raises ValueError, as the Java producer fails such a send.
    """
    num_partitions = len(topic_partitions)
    if explicit_partition is not None:
        return _checked_explicit_partition(explicit_partition, num_partitions)
    if key is not None and not ignore_keys:
        return partition_for_key(key, num_partitions)
    available = topic_partitions if available_partitions is None else available_partitions
    return null_key_partitioner.partition(available, num_partitions)


def _checked_explicit_partition(partition: int, num_partitions: int) -> int:
    if partition < 0:
        raise ValueError(f"Invalid partition: {partition}. Partition number should always be "
                         "non-negative or null.")
    if partition >= num_partitions:
        raise ValueError(f"Invalid partition given with record: {partition} is not in the range "
                         f"[0...{num_partitions}).")
    return partition
