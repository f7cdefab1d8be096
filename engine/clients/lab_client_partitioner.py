"""The partition of a record the lab's own client sends (`Cluster.produce`) without naming one.

`Cluster.produce` is not a producer with an accumulator: each call sends its one record at once,
as a batch of its own, in a request of its own (the web form's Produce, a scenario's `produce`
step without `producer`). It still picks a partition the way Kafka's Java producer does
(KafkaProducer.partition):

1. an explicit partition wins (the caller checks it);
2. a key picks `toPositive(murmur2(key)) % numPartitions` (BuiltInPartitioner.partitionForKey);
3. a record with neither goes to the null-key partitioner: Kafka's default, the uniform sticky
   partitioner (KIP-794, Kafka 3.3+, class BuiltInPartitioner), unless the caller asks for
   "round-robin", the null-key path of the DefaultPartitioner before Kafka 2.4.

What "sticky" means for a client that never batches
----------------------------------------------------
The sticky idea (KIP-480, Kafka 2.4) is to keep sending null-key records to one partition so they
fill one batch instead of one small batch per partition. Its two implementations differ in WHEN
they move on, and for a one-record-per-batch client they give opposite results:

- KIP-480's StickyPartitionCache (2.4-3.2) switched when the accumulator opened a new batch for
  the sticky partition (`onNewBatch` -> `nextPartition`, never the same partition twice if another
  is available). Every record of this client is a new batch, so that rule would move on at every
  record: a different partition every time, no stickiness at all. KIP-794 was written against
  this rule: tied to the batches' timing, it sent more records to slower brokers (KAFKA-10888).
- KIP-794's BuiltInPartitioner (3.3+) counts bytes: it stays on the partition until `batch.size`
  bytes (16384 by default) were appended to it, then draws a new one uniformly from the
  partitions that have a leader (maybe the same one). It postpones the switch while that
  partition's last batch is still open (`enableSwitch` = RecordAccumulator.allBatchesFull), at
  most until 2 x batch.size, and completes a postponed switch at the next append once the queue
  holds only full batches (RecordAccumulator.partitionChanged).

The lab follows KIP-794, which is what a producer of today runs: one `StickyPartitioner` (the
same class named producers use, engine/clients/partitioner.py) per topic, told after each record
the size of the batch that carries it (a one-record batch: Kafka's `appendedBytes` for a new
batch is its estimated size, header included). A record's batch is sent at once, so by the next
record nothing is open and the switch is never postponed (`enable_switch` is always true). The
bytes count when the record is handed over, whatever its send's outcome, as Kafka counts them at
append time: a sticky partition that lost its leader takes the failures until batch.size bytes
went to it. So a trickle of small records (the web form's tens of bytes each) lands on one
partition, a few hundred records in a row, then on another drawn at random: what a Kafka 3.3+
producer sending the same records one at a time does, and not the even spread of the pre-2.4
round robin the study notes describe.

Adaptive partitioning (queue sizes weighting the draw) has nothing to weigh here: this client has
no queues. Randomness comes from the `random.Random` the cluster hands over (its seed's
"partitioner" fork), drawn only when a partitioner picks, so the same seed and commands give the
same partitions.
"""
from __future__ import annotations

import random
from collections.abc import Sequence

from engine.clients.partitioner import (
    DEFAULT_BATCH_SIZE_BYTES,
    NullKeyPartitioner,
    RoundRobinPartitioner,
    StickyPartitioner,
    partition_for_key,
)

STICKY = "sticky"
ROUND_ROBIN = "round-robin"
NULL_KEY_PARTITIONERS = (STICKY, ROUND_ROBIN)   # the values of a producer's partitioner.class too


class LabClientPartitioner:
    """Picks partitions for `Cluster.produce`; one instance per cluster, state per topic."""

    def __init__(self, rng: random.Random, batch_size: int = DEFAULT_BATCH_SIZE_BYTES) -> None:
        self._rng = rng
        self.batch_size = batch_size
        self._null_key: dict[tuple[str, str], NullKeyPartitioner] = {}

    def choose(self, topic: str, key: bytes | None, num_partitions: int, available_partitions: Sequence[int],
               batch_bytes: int, partitioner: str = STICKY) -> int:
        """The partition for a record sent alone in a batch of `batch_bytes` bytes.

        `available_partitions` are those with a leader, in partition order. `partitioner` names the
        null-key partitioner ("sticky", Kafka's default, or "round-robin"); a keyed record ignores it.
        """
        if partitioner not in NULL_KEY_PARTITIONERS:
            raise ValueError(f"partitioner must be one of {', '.join(NULL_KEY_PARTITIONERS)}, not {partitioner!r}")
        if key is not None:
            return partition_for_key(key, num_partitions)
        chooser = self.null_key_partitioner(topic, partitioner)
        partition = chooser.partition(available_partitions, num_partitions)
        chooser.on_append(batch_bytes, available_partitions, num_partitions, enable_switch=True)
        return partition

    def null_key_partitioner(self, topic: str, partitioner: str = STICKY) -> NullKeyPartitioner:
        """The topic's null-key partitioner of that kind, created on first use."""
        chooser = self._null_key.get((topic, partitioner))
        if chooser is None:
            chooser = (StickyPartitioner(self._rng, self.batch_size) if partitioner == STICKY
                       else RoundRobinPartitioner(self._rng))
            self._null_key[(topic, partitioner)] = chooser
        return chooser
