"""Where a consumer reads from and what it has read: positions, Fetch and ListOffsets (Kafka's Fetcher
and OffsetFetcher).

- A newly assigned partition has no position: a group consumer asks the coordinator for the
  committed offset (OffsetFetch); if there is none — or the consumer has no group — the
  `auto.offset.reset` strategy applies (ListOffsets to the leader: earliest = log start offset,
  latest = high watermark), and `none` makes poll() raise NoOffsetForPartitionError.
- Fetches go to each partition's leader (FetchRequest with replica_id -1: only records below the
  high watermark), one in flight per broker, with fetch.max.wait.ms / fetch.min.bytes /
  max.partition.fetch.bytes. With `client.rack` set (KIP-392) the fetch carries the rack, and a
  leader whose replica.selector.class prefers another replica answers with that
  `preferred_read_replica` instead of records: the consumer then fetches from it
  (AbstractFetch.selectReadReplica) until metadata.max.age.ms passes, the replica leaves the
  metadata, a fetch to it fails or it answers OFFSET_OUT_OF_RANGE or a stale-metadata error — then
  from the leader again (FetchCollector.handleInitializeErrors, FetchUtils.requestMetadataUpdate).
  The broker returns whole batches, so records below the position are dropped here. An answer
  for a partition whose position moved meanwhile (seek, rebalance) is thrown away.
- poll() hands out at most max.poll.records, from the buffered answers in arrival order; the
  position moves past what was handed out, and only then.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from engine import events as ev
from engine.clients.consumer_state import ConsumedRecord
from engine.common.errors import Errors
from engine.groups.assignors import TopicPartition
from engine.groups.protocol import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, ListOffsetsPartition, ListOffsetsRequest
from engine.protocol import CONSUMER_REPLICA_ID, FetchPartition, FetchRequest
from engine.storage import record_batch as rb
from engine.storage.batch_records import (
    HEADERS,
    INT64_MAX,
    KEY,
    LEADER_EPOCH,
    OFFSET,
    TIMESTAMP,
    VALUE,
    Constant,
    decode_records,
    record_shape,
)

if TYPE_CHECKING:
    from engine.clients.consumer import Consumer

STALE_METADATA_ERRORS = frozenset({Errors.NOT_LEADER_OR_FOLLOWER, Errors.FENCED_LEADER_EPOCH,
                                   Errors.UNKNOWN_LEADER_EPOCH, Errors.UNKNOWN_TOPIC_OR_PARTITION,
                                   Errors.LEADER_NOT_AVAILABLE})
RESET_TIMESTAMPS = {"earliest": EARLIEST_TIMESTAMP, "latest": LATEST_TIMESTAMP}


@dataclass
class CompletedFetch:
    tp: TopicPartition
    fetch_offset: int                  # the position its next record is handed out at
    records: list[ConsumedRecord]
    next_index: int = 0                # records[next_index:] are not handed out yet (no re-slicing
                                       # of a 1 MiB fetch per max.poll.records handed out)


class Fetcher:
    def __init__(self, consumer: Consumer) -> None:
        self.consumer = consumer
        self.config = consumer.config
        self._fetch_in_flight: set[int] = set()
        self._completed: list[CompletedFetch] = []
        self._offset_fetch_in_flight = False
        self._list_offsets_in_flight: set[TopicPartition] = set()
        self._next_reset_attempt_ms = 0

    # -- positions --------------------------------------------------------------------------
    def update_positions(self) -> None:
        subscriptions = self.consumer.subscriptions
        initializing = [tp for tp, s in subscriptions.assignment.items()
                        if s.position is None and s.reset_strategy is None]
        coordinator = self.consumer.coordinator
        if initializing:
            if coordinator is None:
                self._request_reset(initializing)
            elif not self._offset_fetch_in_flight:
                self._offset_fetch_in_flight = coordinator.fetch_committed(
                    initializing, lambda answer: self._on_committed(initializing, answer))
        self._reset_offsets()

    def _on_committed(self, asked: list[TopicPartition], answer) -> None:
        self._offset_fetch_in_flight = False
        self.consumer.wake()
        if answer is None or answer.error != Errors.NONE:
            return                           # asked again on the next poll
        assignment = self.consumer.subscriptions.assignment
        found = {TopicPartition(p.topic, p.partition): p for p in answer.partitions}
        missing = []
        for tp in asked:
            state = assignment.get(tp)
            if state is None or state.position is not None or state.reset_strategy is not None:
                continue                     # revoked, or seeked, since the question was asked
            committed = found.get(tp)
            if committed is not None and committed.committed_offset >= 0:
                state.position, state.position_epoch = committed.committed_offset, committed.committed_leader_epoch
            else:
                missing.append(tp)
        self._request_reset(missing)

    def _request_reset(self, partitions: list[TopicPartition]) -> None:
        strategy = self.config.auto_offset_reset
        if not partitions:
            return
        if strategy == "none":
            self.consumer.fail(Errors.NO_OFFSET_FOR_PARTITION,
                               f"Undefined offset with no reset policy for partitions: "
                               f"{', '.join(str(tp) for tp in sorted(partitions))}")
            return
        for tp in partitions:
            self.consumer.subscriptions.assignment[tp].reset_strategy = strategy

    def reset_to(self, tp: TopicPartition, strategy: str) -> None:
        state = self.consumer.subscriptions.assignment[tp]
        state.position, state.reset_strategy = None, strategy
        self.drop_buffered(tp)

    def _reset_offsets(self) -> None:
        now = self.consumer.now_ms
        if now < self._next_reset_attempt_ms:
            return
        pending: dict[int, list[tuple[TopicPartition, str, int]]] = {}
        for tp, state in self.consumer.subscriptions.assignment.items():
            if state.reset_strategy is None or tp in self._list_offsets_in_flight:
                continue
            leader, epoch = self.consumer.metadata.leader(tp)
            if leader < 0:
                self.consumer.metadata.need_update = True
                continue
            pending.setdefault(leader, []).append((tp, state.reset_strategy, epoch))
        for leader, items in sorted(pending.items()):
            request = ListOffsetsRequest(CONSUMER_REPLICA_ID, self._isolation(), [
                ListOffsetsPartition(tp.topic, tp.partition, RESET_TIMESTAMPS[strategy], epoch)
                for tp, strategy, epoch in items])
            self._list_offsets_in_flight.update(tp for tp, _, _ in items)
            self.consumer.send(leader, request, partial(self._on_list_offsets, items),
                               summary={"partitions": [f"{tp}@{strategy}" for tp, strategy, _ in items]})

    def _on_list_offsets(self, items: list[tuple[TopicPartition, str, int]], answer) -> None:
        self._list_offsets_in_flight.difference_update(tp for tp, _, _ in items)
        self.consumer.wake()
        if answer is None:
            self.consumer.metadata.need_update = True
            self._next_reset_attempt_ms = self.consumer.now_ms + self.config.retry_backoff_ms
            return
        strategies = {tp: strategy for tp, strategy, _ in items}
        for result in answer.partitions:
            tp = TopicPartition(result.topic, result.partition)
            state = self.consumer.subscriptions.assignment.get(tp)
            if state is None or state.reset_strategy != strategies.get(tp):
                continue
            if result.error == Errors.NONE:
                state.position, state.position_epoch, state.reset_strategy = result.offset, result.leader_epoch, None
                self.consumer.publish(ev.OffsetsReset(consumer=self.consumer.name, topic=tp.topic,
                                                      partition=tp.partition, strategy=strategies[tp],
                                                      offset=result.offset))
            else:
                self.consumer.metadata.need_update = True
                self._next_reset_attempt_ms = self.consumer.now_ms + self.config.retry_backoff_ms

    def _isolation(self) -> int:
        return 1 if self.config.isolation_level == "read_committed" else 0

    # -- fetching ---------------------------------------------------------------------------
    def send_fetches(self) -> None:
        subscriptions, metadata = self.consumer.subscriptions, self.consumer.metadata
        buffered = {c.tp for c in self._completed}
        by_node: dict[int, list[FetchPartition]] = {}
        for tp, state in subscriptions.assignment.items():
            if state.position is None or state.paused or tp in buffered:
                continue
            leader, epoch = metadata.leader(tp)
            if leader < 0:
                metadata.need_update = True
                continue
            by_node.setdefault(self._select_read_replica(tp, leader), []).append(FetchPartition(
                tp.topic, tp.partition, state.position, epoch,
                partition_max_bytes=self.config.max_partition_fetch_bytes))
        rack_id = self.config.client_rack or None
        for node, parts in sorted(by_node.items()):
            if node in self._fetch_in_flight:
                continue
            self._fetch_in_flight.add(node)
            request = FetchRequest(CONSUMER_REPLICA_ID, self.config.fetch_max_wait_ms, self.config.fetch_min_bytes,
                                   self.config.fetch_max_bytes, parts, self._isolation(), rack_id=rack_id)
            sent = {TopicPartition(p.topic, p.partition): p.fetch_offset for p in parts}
            summary: dict = {"partitions": [{"topic": p.topic, "partition": p.partition, "fetch_offset": p.fetch_offset}
                                            for p in parts]}
            if rack_id is not None:
                summary["rack_id"] = rack_id
            self.consumer.send(node, request, partial(self._on_fetch, node, sent), foreground=False, summary=summary)

    # -- follower fetching (KIP-392) ----------------------------------------------------------
    def _select_read_replica(self, tp: TopicPartition, leader: int) -> int:
        """AbstractFetch.selectReadReplica: the preferred read replica while it holds and is in the
        metadata; otherwise the leader (a replica gone from the metadata is forgotten, metadata asked for)."""
        state = self.consumer.subscriptions.assignment[tp]
        replica, expires = state.preferred_read_replica, state.preferred_read_replica_expire_ms
        if replica is None:
            return leader
        if expires is not None and self.consumer.now_ms > expires:
            self._clear_preferred(tp, "metadata.max.age.ms passed since the leader chose it")
            return leader
        if replica not in self.consumer.metadata.brokers:
            self.consumer.metadata.need_update = True
            self._clear_preferred(tp, f"broker {replica} is not in the consumer's metadata")
            return leader
        return replica

    def _set_preferred(self, tp: TopicPartition, replica: int) -> None:
        """SubscriptionState.updatePreferredReadReplica: the expiry is set only when the replica changes."""
        state = self.consumer.subscriptions.assignment[tp]
        if state.preferred_read_replica == replica:
            return
        previous = state.preferred_read_replica
        state.preferred_read_replica = replica
        state.preferred_read_replica_expire_ms = self.consumer.now_ms + self.config.metadata_max_age_ms
        self._publish_replica_change(tp, replica, previous, f"the leader prefers broker {replica} "
                                                            f"(client.rack {self.config.client_rack})")

    def _clear_preferred(self, tp: TopicPartition, reason: str) -> bool:
        """SubscriptionState.clearPreferredReadReplica: True when there was one."""
        state = self.consumer.subscriptions.assignment.get(tp)
        if state is None or state.preferred_read_replica is None:
            return False
        previous = state.preferred_read_replica
        state.preferred_read_replica = state.preferred_read_replica_expire_ms = None
        self._publish_replica_change(tp, None, previous, reason)
        return True

    def _publish_replica_change(self, tp: TopicPartition, replica: int | None, previous: int | None,
                                reason: str) -> None:
        self.consumer.publish(ev.PreferredReadReplicaChanged(
            consumer=self.consumer.name, topic=tp.topic, partition=tp.partition,
            replica=-1 if replica is None else replica, previous=-1 if previous is None else previous,
            leader=self.consumer.metadata.leader(tp)[0], reason=reason))

    def _on_fetch(self, node: int, sent: dict[TopicPartition, int], answer) -> None:
        self._fetch_in_flight.discard(node)
        if answer is None:
            self.consumer.metadata.need_update = True
            for tp in sent:   # AbstractFetch.handleFetchFailure: back to the leader for these partitions
                self._clear_preferred(tp, f"no answer from broker {node}")
            self.consumer.wake()
            return
        assignment = self.consumer.subscriptions.assignment
        got_records = False
        for data in answer.partitions:
            tp = TopicPartition(data.topic, data.partition)
            state = assignment.get(tp)
            if state is None or state.position is None or state.position != sent.get(tp):
                continue                      # revoked or moved since the request left (sent holds ints)
            if data.error == Errors.NONE:
                state.high_watermark = data.high_watermark
                records = _decode(data.topic, data.partition, data.records, state.position)
                if records:
                    self._completed.append(CompletedFetch(tp, state.position, records))
                    got_records = True
                elif data.records:
                    # Whole batches, none holding a record at or after the position (a compacted log:
                    # an empty batch the cleaner kept, or records it removed): move past them, as
                    # Kafka's consumer moves to the fetch's nextFetchOffset (FetchCollector).
                    state.position = max(state.position, _next_offset_after(data.records))
                    got_records = True
                if data.preferred_read_replica >= 0:
                    self._set_preferred(tp, data.preferred_read_replica)
            elif data.error == Errors.OFFSET_OUT_OF_RANGE:
                # From a follower, the offset may just be past what it has yet: ask the leader instead.
                if not self._clear_preferred(tp, f"broker {node} answered {Errors.OFFSET_OUT_OF_RANGE} "
                                                 f"for offset {state.position}"):
                    state.position = None
                    self._request_reset([tp])
            elif data.error in STALE_METADATA_ERRORS:
                self.consumer.metadata.need_update = True
                self._clear_preferred(tp, f"broker {node} answered {data.error}")
        if got_records or any(d.error != Errors.NONE or d.preferred_read_replica >= 0 for d in answer.partitions):
            self.consumer.wake()

    def drop_buffered(self, tp: TopicPartition) -> None:
        self._completed = [c for c in self._completed if c.tp != tp]

    def has_buffered(self) -> bool:
        return bool(self._completed)

    def collect(self, max_records: int) -> list[ConsumedRecord]:
        """Hand out up to `max_records` buffered records; positions move past them. A buffered
        answer counts only if it starts exactly at the position (Java's nextFetchOffset check)."""
        out: list[ConsumedRecord] = []
        assignment = self.consumer.subscriptions.assignment
        keep: list[CompletedFetch] = []
        for completed in self._completed:
            state = assignment.get(completed.tp)
            if state is None or state.position != completed.fetch_offset:
                continue                      # revoked or seeked meanwhile: dropped
            if state.paused or len(out) >= max_records:
                keep.append(completed)
                continue
            start = completed.next_index
            take = completed.records[start:start + max_records - len(out)]
            out.extend(take)
            state.position, state.position_epoch = take[-1].offset + 1, take[-1].leader_epoch
            completed.next_index = start + len(take)
            if completed.next_index < len(completed.records):
                completed.fetch_offset = state.position
                keep.append(completed)
        self._completed = keep
        return out


def _next_offset_after(data: bytes) -> int:
    """The offset after the last whole batch in `data` (RecordBatch.nextOffset)."""
    position, next_offset = 0, -1
    while position + rb.RECORD_BATCH_OVERHEAD <= len(data):
        header = rb.read_batch_header(data, position)
        if position + header.size_in_bytes > len(data):
            break
        next_offset, position = header.next_offset, position + header.size_in_bytes
    return next_offset


def _decode(topic: str, partition: int, data: bytes, position: int) -> list[ConsumedRecord]:
    """The fetched records from `position` on (the first batch may start below it), CRCs checked
    (check.crcs), control records dropped: built straight from the bytes (engine.storage.batch_records)."""
    shape = record_shape(ConsumedRecord, {
        "topic": Constant(topic), "partition": Constant(partition), "offset": OFFSET, "key": KEY,
        "value": VALUE, "timestamp": TIMESTAMP, "headers": HEADERS, "leader_epoch": LEADER_EPOCH})
    return decode_records(data, position, INT64_MAX, shape, verify_crc=True, keep_control=False)
