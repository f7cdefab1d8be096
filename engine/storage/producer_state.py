"""What one replica of a partition remembers about idempotent producers (Kafka's ProducerStateManager).

Per producer id: the current producer epoch and the metadata of its last 5 batches
(`NUM_BATCHES_TO_RETAIN`): first and last sequence, first and last offset. That is enough for the
leader to recognise a retried batch it already wrote, and it is why an idempotent producer may
keep at most 5 requests in flight.

Rules, as Kafka's ProducerAppendInfo and ProducerStateEntry apply them to a client's append
(the leader; a follower's append only updates the state, it checks nothing):
- a batch whose epoch and first/last sequence equal a retained batch's is a *duplicate*: nothing
  is appended and the producer is told the offsets the original got;
- an epoch older than the producer's current one is refused: INVALID_PRODUCER_EPOCH;
- a new (higher) epoch must start at sequence 0, unless the broker knew no epoch for it;
- within an epoch, a batch is in sequence only if its first sequence is last sequence + 1
  (wrapping from 2^31-1 to 0); otherwise OUT_OF_ORDER_SEQUENCE_NUMBER;
- a producer the broker has no state for may start at any sequence (its earlier batches may
  have been deleted by retention).

Leaders and followers both update the state from the batch headers they append, so a new
leader already knows every producer. A replica whose log was opened (broker restart) or
truncated rebuilds the state by reading the batch headers of its log (`from_log`); Kafka reads
its snapshot files and replays the log after them, which ends in the same state.

Batches without a producer id (producerId = -1) play no part. Only data batches count: control
batches (transaction markers) are skipped, as the lab has no transactions.
"""
from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine.common.errors import Errors, KafkaError
from engine.storage import record_batch as rb

if TYPE_CHECKING:
    from engine.storage.log import Log

NUM_BATCHES_TO_RETAIN = 5
MAX_SEQUENCE = (1 << 31) - 1
OUT_OF_ORDER_SEQUENCE_NUMBER = Errors.OUT_OF_ORDER_SEQUENCE_NUMBER
INVALID_PRODUCER_EPOCH = Errors.INVALID_PRODUCER_EPOCH
_SCAN_BYTES = 1 << 20


def increment_sequence(sequence: int, increment: int) -> int:
    """sequence + increment, wrapping past 2^31-1 to 0 (DefaultRecordBatch.incrementSequence)."""
    if sequence > MAX_SEQUENCE - increment:
        return increment - (MAX_SEQUENCE - sequence) - 1
    return sequence + increment


def decrement_sequence(sequence: int, decrement: int) -> int:
    if sequence < decrement:
        return MAX_SEQUENCE - (decrement - sequence) + 1
    return sequence - decrement


def in_sequence(last_sequence: int, next_sequence: int) -> bool:
    return next_sequence == last_sequence + 1 or (next_sequence == 0 and last_sequence == MAX_SEQUENCE)


def last_sequence_of(header: rb.BatchHeader) -> int:
    """lastOffsetDelta doubles as lastSequenceDelta."""
    return increment_sequence(header.base_sequence, header.last_offset_delta)


def has_producer_id(header: rb.BatchHeader) -> bool:
    return header.producer_id != rb.NO_PRODUCER_ID and not header.is_control


def batch_headers(records: bytes | bytearray | memoryview) -> list[rb.BatchHeader]:
    """The headers of the batches in a produce request's (or a fetch answer's) records."""
    return [header for _, header in rb.iter_batches(records)]


class ProducerStateError(KafkaError):
    """An append a leader refuses; `kafka_name` is the error the producer gets."""

    def __init__(self, kafka_name: str, message: str, *, producer_id: int, producer_epoch: int,
                 base_sequence: int, expected_sequence: int, current_epoch: int) -> None:
        super().__init__(message, error=kafka_name)
        self.producer_id = producer_id
        self.producer_epoch = producer_epoch
        self.base_sequence = base_sequence
        self.expected_sequence = expected_sequence   # -1 when any sequence (or 0 for a new epoch)
        self.current_epoch = current_epoch


@dataclass(frozen=True, slots=True)
class BatchMetadata:
    first_sequence: int
    last_sequence: int
    first_offset: int
    last_offset: int


@dataclass(slots=True)
class ProducerStateEntry:
    producer_id: int
    producer_epoch: int = rb.NO_PRODUCER_EPOCH
    batches: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))

    @property
    def last_sequence(self) -> int:
        return self.batches[-1].last_sequence if self.batches else rb.NO_SEQUENCE

    def find_duplicate(self, epoch: int, first_sequence: int, last_sequence: int) -> BatchMetadata | None:
        if epoch != self.producer_epoch:
            return None
        for batch in self.batches:
            if batch.first_sequence == first_sequence and batch.last_sequence == last_sequence:
                return batch
        return None

    def add_batch(self, epoch: int, batch: BatchMetadata) -> None:
        if epoch != self.producer_epoch:     # a new epoch forgets the old epoch's batches
            self.batches.clear()
            self.producer_epoch = epoch
        self.batches.append(batch)           # the deque drops the oldest beyond 5

    def copy(self) -> ProducerStateEntry:
        return ProducerStateEntry(self.producer_id, self.producer_epoch,
                                  deque(self.batches, maxlen=NUM_BATCHES_TO_RETAIN))

    def to_dict(self) -> dict:
        return {"producer_id": self.producer_id, "producer_epoch": self.producer_epoch,
                "batches": [{"first_sequence": b.first_sequence, "last_sequence": b.last_sequence,
                             "first_offset": b.first_offset, "last_offset": b.last_offset}
                            for b in self.batches]}


class ProducerStateManager:
    """The producer state of one replica of one partition."""

    def __init__(self) -> None:
        self.producers: dict[int, ProducerStateEntry] = {}

    @classmethod
    def from_log(cls, log: Log) -> ProducerStateManager:
        """Rebuild from the batch headers of the whole log (records are not decoded)."""
        manager = cls()
        offset, end = log.log_start_offset, log.log_end_offset
        while offset < end:
            data = log.read_batches(offset, _SCAN_BYTES)
            if not data.records:
                break
            headers = batch_headers(data.records)
            manager.update(headers)
            offset = max(data.next_offset, headers[-1].next_offset)
        return manager

    def entry(self, producer_id: int) -> ProducerStateEntry | None:
        return self.producers.get(producer_id)

    # -- the leader: before appending a client's batches ----------------------------------------
    def check_client_append(self, headers: Sequence[rb.BatchHeader]) -> BatchMetadata | None:
        """Validate a client's batches before they are written.

        Returns the retained metadata if a batch duplicates one already in the log (the append
        must then be skipped and answered with those offsets); raises ProducerStateError if a
        batch is out of sequence or fenced; returns None if every batch may be appended.
        """
        pending: dict[int, ProducerStateEntry] = {}
        for header in headers:
            if not has_producer_id(header):
                continue
            pid = header.producer_id
            current = self.producers.get(pid)
            last = last_sequence_of(header)
            if current is not None and pid not in pending:
                duplicate = current.find_duplicate(header.producer_epoch, header.base_sequence, last)
                if duplicate is not None:
                    return duplicate
            working = pending.get(pid) or (current.copy() if current else ProducerStateEntry(pid))
            _check_epoch_and_sequence(working, header, known=current is not None or pid in pending)
            working.add_batch(header.producer_epoch, BatchMetadata(header.base_sequence, last, -1, -1))
            pending[pid] = working
        return None

    # -- every replica: after appending -----------------------------------------------------
    def update(self, headers: Iterable[rb.BatchHeader], first_offset: int | None = None) -> None:
        """Record appended batches. A leader passes the offset it assigned to the first batch
        (its headers still carry the producer's offsets); a follower's headers carry the real ones."""
        next_offset = first_offset
        for header in headers:
            base = header.base_offset if next_offset is None else next_offset
            if next_offset is not None:
                next_offset += header.last_offset_delta + 1
            if not has_producer_id(header):
                continue
            entry = self.producers.get(header.producer_id)
            if entry is None:
                entry = self.producers[header.producer_id] = ProducerStateEntry(header.producer_id)
            entry.add_batch(header.producer_epoch, BatchMetadata(
                header.base_sequence, last_sequence_of(header), base, base + header.last_offset_delta))

    def to_dict(self) -> dict:
        return {str(pid): entry.to_dict() for pid, entry in sorted(self.producers.items())}


def _check_epoch_and_sequence(entry: ProducerStateEntry, header: rb.BatchHeader, *, known: bool) -> None:
    epoch, first = header.producer_epoch, header.base_sequence

    def refuse(kafka_name: str, message: str, expected: int) -> None:
        raise ProducerStateError(kafka_name, message, producer_id=entry.producer_id, producer_epoch=epoch,
                                 base_sequence=first, expected_sequence=expected,
                                 current_epoch=entry.producer_epoch)
    if epoch < entry.producer_epoch:
        refuse(INVALID_PRODUCER_EPOCH, f"Producer {entry.producer_id} sent epoch {epoch}, older than its "
                                       f"current epoch {entry.producer_epoch}", -1)
    if epoch != entry.producer_epoch:
        if first != 0 and entry.producer_epoch != rb.NO_PRODUCER_EPOCH:
            refuse(OUT_OF_ORDER_SEQUENCE_NUMBER,
                   f"Producer {entry.producer_id} starts its new epoch {epoch} at sequence {first}; "
                   f"a new epoch must start at 0", 0)
        return
    if not known or not entry.batches:
        return  # no state for this producer: any sequence is accepted
    if not in_sequence(entry.last_sequence, first):
        expected = increment_sequence(entry.last_sequence, 1)
        refuse(OUT_OF_ORDER_SEQUENCE_NUMBER,
               f"Out of order sequence number for producer {entry.producer_id}: got {first}, expected "
               f"{expected} (last sequence written {entry.last_sequence})", expected)
