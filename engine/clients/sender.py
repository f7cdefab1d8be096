"""The producer's Sender: the loop that turns accumulated batches into Produce requests.

Each run (Kafka's `Sender.runOnce`): ask the accumulator which leaders have sendable batches,
keep those with fewer than `max.in.flight.requests.per.connection` requests outstanding, drain
their batches and send ONE ProduceRequest per leader carrying a batch for each of its
partitions; expire batches past `delivery.timeout.ms`; then sleep until the next linger or
backoff deadline, an answer, or a new full batch wakes it.

Answers, per partition: NONE completes the batch (its records get their offsets); a retriable
error puts it back in the accumulator for another attempt, while `retries` and
`delivery.timeout.ms` allow; other errors fail it. A request that times out (`request.timeout.ms`)
counts as NETWORK_EXCEPTION for each batch in it — the producer cannot know whether the broker
wrote them, which is where duplicates come from. Errors that mean stale metadata
(NOT_LEADER_OR_FOLLOWER, LEADER_NOT_AVAILABLE, a time-out, ...) also refresh the metadata, so the
retry goes to the new leader.

`Metadata` is the producer's picture of the cluster: partitions' leaders and epochs, from
MetadataRequests sent to the least loaded broker. `Idempotence` is Kafka's TransactionManager
for a producer without transactions: the producer id and epoch from InitProducerId, and per
partition the next sequence number, the last acknowledged one and the batches in flight. With
it, a retried batch keeps its sequence, and only the first unacknowledged batch of a partition
may be resent, so order survives retries with up to 5 requests in flight. A sequence the
producer can no longer account for (a batch failed or expired after it was sent, or the broker
reports a real gap) makes it bump its epoch and restart that partition's sequences at 0.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from engine import events as ev
from engine.clients.accumulator import ProducerBatch, TopicPartition
from engine.common.errors import Errors
from engine.protocol import (
    InitProducerIdRequest,
    InitProducerIdResponse,
    MetadataRequest,
    MetadataResponse,
    PartitionMetadata,
    ProducePartitionData,
    ProduceRequest,
    ProduceResponse,
)
from engine.storage import record_batch as rb

if TYPE_CHECKING:
    from engine.clients.producer import Producer
    from engine.sim.scheduler import Scheduled

# Kafka's RetriableException subclasses a produce answer can carry.
RETRIABLE_ERRORS = frozenset({
    Errors.NOT_LEADER_OR_FOLLOWER, Errors.LEADER_NOT_AVAILABLE, Errors.NETWORK_EXCEPTION,
    Errors.REQUEST_TIMED_OUT, Errors.NOT_ENOUGH_REPLICAS, Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.CORRUPT_MESSAGE, Errors.KAFKA_STORAGE_ERROR,
    Errors.FENCED_LEADER_EPOCH, Errors.UNKNOWN_LEADER_EPOCH})
# ... and the InvalidMetadataException ones among them: the metadata is refreshed.
METADATA_ERRORS = frozenset({
    Errors.NOT_LEADER_OR_FOLLOWER, Errors.LEADER_NOT_AVAILABLE, Errors.NETWORK_EXCEPTION,
    Errors.UNKNOWN_TOPIC_OR_PARTITION, Errors.KAFKA_STORAGE_ERROR, Errors.FENCED_LEADER_EPOCH,
    Errors.UNKNOWN_LEADER_EPOCH})
# Errors after which the broker may have written the batch all the same.
MAYBE_WRITTEN_ERRORS = frozenset({Errors.NETWORK_EXCEPTION, Errors.REQUEST_TIMED_OUT,
                                  Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND})
MAX_DRAIN_ROUNDS = 1000
MAX_RECORDS_IN_EVENT = 20


class Metadata:
    """The producer's view of the cluster, from its last MetadataResponse."""

    def __init__(self, bootstrap: list[int]) -> None:
        self.bootstrap = list(bootstrap)
        self.brokers: list[int] = []
        self.topics: dict[str, list[PartitionMetadata]] = {}
        self.wanted: set[str] = set()           # topics a blocked send() waits for
        self.need_update = True
        self.last_refresh_ms: int | None = None
        self.last_attempt_ms: int | None = None
        self.in_flight = False
        self.version = 0
        self._available: dict[str, tuple[int, ...]] = {}   # available_partitions, until the next update

    def nodes(self) -> list[int]:
        return self.brokers or self.bootstrap

    def update(self, response: MetadataResponse, now_ms: int) -> None:
        self.brokers = list(response.brokers)
        for topic in response.topics:
            if topic.error != Errors.NONE:
                self.topics.pop(topic.topic, None)
                continue
            known = {p.partition: p for p in self.topics.get(topic.topic, [])}
            merged = []
            for fresh in topic.partitions:   # an answer older than what we know does not win (KIP-320)
                old = known.get(fresh.partition)
                merged.append(old if old is not None and old.leader_epoch > fresh.leader_epoch else fresh)
            self.topics[topic.topic] = merged
        self.last_refresh_ms = now_ms
        self.need_update = any(t not in self.topics for t in self.wanted)
        self.version += 1
        self._available.clear()

    def _partition(self, tp: TopicPartition) -> PartitionMetadata | None:
        parts = self.topics.get(tp[0])
        return parts[tp[1]] if parts is not None and tp[1] < len(parts) else None

    def leader_for(self, tp: TopicPartition) -> int | None:
        part = self._partition(tp)
        return part.leader if part is not None and part.leader >= 0 else None

    def leader_epoch_for(self, tp: TopicPartition) -> int:
        part = self._partition(tp)
        return part.leader_epoch if part is not None else -1

    def partition_count(self, topic: str) -> int | None:
        parts = self.topics.get(topic)
        return len(parts) if parts is not None else None

    def available_partitions(self, topic: str) -> tuple[int, ...]:
        """The topic's partitions with a leader (the partitioner asks twice per record sent)."""
        available = self._available.get(topic)
        if available is None:
            available = self._available[topic] = tuple(p.partition for p in self.topics.get(topic, [])
                                                       if p.leader >= 0)
        return available

    def partitions_for_node(self, node: int) -> list[TopicPartition]:
        return [(topic, p.partition) for topic in sorted(self.topics) for p in self.topics[topic] if p.leader == node]


@dataclass
class PartitionSequences:
    """One partition's sequence bookkeeping (Kafka's TxnPartitionEntry)."""
    producer_epoch: int
    next_sequence: int = 0
    last_acked_sequence: int = -1
    in_flight: list[ProducerBatch] = field(default_factory=list)   # sequenced and not done, by sequence
    unresolved_sequence: int | None = None   # a batch expired or failed after it was sent
    gap: bool = False                        # the broker is missing a sequence for sure


class Idempotence:
    def __init__(self, producer: Producer) -> None:
        self.producer = producer
        self.producer_id = rb.NO_PRODUCER_ID
        self.producer_epoch = rb.NO_PRODUCER_EPOCH
        self.partitions: dict[TopicPartition, PartitionSequences] = {}

    @property
    def has_producer_id(self) -> bool:
        return self.producer_id != rb.NO_PRODUCER_ID

    def _state(self, tp: TopicPartition) -> PartitionSequences:
        state = self.partitions.get(tp)
        if state is None:
            state = self.partitions[tp] = PartitionSequences(self.producer_epoch)
        return state

    # -- the drain's questions ------------------------------------------------------------------
    def should_stop_drain(self, first: ProducerBatch) -> bool:
        if not self.has_producer_id:
            return True
        state = self._state(first.tp)
        if state.gap or state.unresolved_sequence is not None:
            if any(b.in_flight for b in state.in_flight):
                return True          # wait until every request for the partition is answered
            self._resolve(first.tp, state)
            state = self.partitions[first.tp]
        if not first.has_sequence:
            if state.producer_epoch != self.producer_epoch:
                if state.in_flight:
                    return True      # old-epoch batches still to finish
                self.partitions[first.tp] = PartitionSequences(self.producer_epoch)
            return False
        # A batch being retried goes only when it is the first unacknowledged one.
        return bool(state.in_flight) and first.base_sequence != state.in_flight[0].base_sequence

    def assign_sequence(self, batch: ProducerBatch) -> None:
        state = self._state(batch.tp)
        batch.producer_id, batch.producer_epoch = self.producer_id, state.producer_epoch
        batch.base_sequence = state.next_sequence
        state.next_sequence += batch.record_count
        state.in_flight.append(batch)

    # -- answers --------------------------------------------------------------------------------
    def on_acknowledged(self, batch: ProducerBatch) -> None:
        state = self.partitions.get(batch.tp)
        if state is None or not batch.has_sequence or batch.producer_epoch != state.producer_epoch:
            return
        state.last_acked_sequence = max(state.last_acked_sequence, batch.last_sequence)
        if batch in state.in_flight:
            state.in_flight.remove(batch)

    def on_failed(self, batch: ProducerBatch, *, written_maybe: bool) -> None:
        """A sent batch failed for good: its sequence is now a hole (or unknown, if the broker
        may have written it: an expiry after a send)."""
        state = self.partitions.get(batch.tp)
        if state is None or not batch.has_sequence or batch.producer_epoch != state.producer_epoch:
            return
        if batch in state.in_flight:
            state.in_flight.remove(batch)
        if written_maybe:
            known = -1 if state.unresolved_sequence is None else state.unresolved_sequence
            state.unresolved_sequence = max(known, batch.last_sequence)
        else:
            state.gap = True

    def on_out_of_order(self, batch: ProducerBatch) -> None:
        """OUT_OF_ORDER_SEQUENCE_NUMBER is retried; it is a real gap only for the batch that is
        next in line (an earlier one would otherwise have been rejected first)."""
        state = self.partitions.get(batch.tp)
        if state is None:
            return
        expected = (state.unresolved_sequence if state.unresolved_sequence is not None
                    else state.last_acked_sequence) + 1
        if batch.base_sequence == expected:
            state.gap = True

    def _resolve(self, tp: TopicPartition, state: PartitionSequences) -> None:
        """Nothing is in flight for the partition: a later acknowledgement may have shown the
        unresolved batch was written; otherwise bump the epoch and start the sequences over."""
        if not state.gap and state.unresolved_sequence is not None \
                and state.last_acked_sequence >= state.unresolved_sequence:
            state.unresolved_sequence = None
            return
        if state.producer_epoch == self.producer_epoch:
            self.producer_epoch += 1
            self.producer.publish(ev.ProducerEpochBumped(
                producer=self.producer.node, producer_id=self.producer_id, producer_epoch=self.producer_epoch,
                reason=f"sequence of {tp[0]}-{tp[1]} cannot be resolved"))
        fresh = PartitionSequences(self.producer_epoch)
        for batch in state.in_flight:            # waiting for a retry: renumber from 0
            batch.producer_epoch, batch.base_sequence = self.producer_epoch, fresh.next_sequence
            fresh.next_sequence += batch.record_count
            fresh.in_flight.append(batch)
        self.partitions[tp] = fresh


class Sender:
    def __init__(self, producer: Producer) -> None:
        self.producer = producer
        self.config = producer.config
        self.accumulator = producer.accumulator
        self.metadata = Metadata(producer.bootstrap)
        self.idempotence = Idempotence(producer) if self.config.enable_idempotence else None
        self.in_flight_per_node: dict[int, int] = {}
        self.in_flight_batches: list[ProducerBatch] = []
        self.failed_nodes: set[int] = set()       # a request to them timed out since their last answer
        self._pid_request_pending = False
        self._pid_retry_at = 0
        self._next_request_id = 0
        self._rotation = 0
        self._timer: Scheduled | None = None
        self._timer_at = -1
        self._ready_delay: int | None = None
        self.stopped = False
        self.stats = {"record-send-total": 0, "record-retry-total": 0, "record-error-total": 0,
                      "batch-send-total": 0, "byte-total": 0, "produce-request-total": 0}

    @property
    def now_ms(self) -> int:
        return self.producer.client.now_ms

    def requests_in_flight(self) -> int:
        return sum(self.in_flight_per_node.values())

    # -- the loop -----------------------------------------------------------------------------
    def wakeup(self, delay_ms: int = 0, *, foreground: bool | None = None) -> None:
        """Run the sender in `delay_ms` (sooner if already due sooner). The run counts as work
        under way (foreground) while records are incomplete."""
        if self.stopped:
            return
        at = self.now_ms + delay_ms
        timer = self._timer
        due = timer is not None and not timer.cancelled and self._timer_at <= at
        if due and timer is not None and timer.foreground:   # (due implies a timer: for the checker)
            return   # (checked before has_pending(): send() wakes the sender for every waiting record)
        if foreground is None:
            foreground = self.producer.has_pending()
        if due and not foreground:
            return
        self.producer.client.cancel(timer)
        self._timer_at = at
        self._timer = self.producer.schedule(delay_ms, self._run, "sender", foreground=foreground)

    def stop(self) -> None:
        self.stopped = True
        self.producer.client.cancel(self._timer)
        self._timer = None

    def _run(self) -> None:
        self._timer = None
        for _ in range(MAX_DRAIN_ROUNDS):
            if not self._run_once():
                break
        self._schedule_next()

    def _run_once(self) -> bool:
        """One pass; True if it sent something (then it runs again at once, like Kafka's poll(0))."""
        now = self.now_ms
        self.producer.place_waiting()
        self._maybe_request_producer_id()
        if self.producer.has_pending() and self.metadata.last_refresh_ms is not None \
                and now - self.metadata.last_refresh_ms >= self.config.metadata_max_age_ms:
            self.metadata.need_update = True
        self._maybe_request_metadata()
        ready = self.accumulator.ready(self.metadata, now)
        if ready.unknown_leader_topics:
            self.metadata.need_update = True
            self._maybe_request_metadata()
        nodes = [n for n in ready.ready_nodes
                 if self.in_flight_per_node.get(n, 0) < self.config.max_in_flight_requests_per_connection]
        batches = self.accumulator.drain(self.metadata, nodes, self.config.max_request_size, now, self.idempotence)
        if self.config.max_in_flight_requests_per_connection == 1:
            for node_batches in batches.values():
                self.accumulator.muted.update(b.tp for b in node_batches)
        self._expire_batches(now)
        sent = False
        for node, node_batches in batches.items():
            if node_batches:
                self._send_produce(node, node_batches)
                sent = True
        self._ready_delay = ready.next_ready_check_delay_ms
        return sent

    def _schedule_next(self) -> None:
        if self.stopped or not self.producer.has_pending():
            return
        now = self.now_ms
        delays = [self._ready_delay] if self._ready_delay is not None else []
        block_deadline = self.producer.next_block_deadline()
        if block_deadline is not None:
            delays.append(max(block_deadline - now, 0))
        expiry = self.accumulator.next_expiry_ms()
        if expiry is not None:
            delays.append(max(expiry - now, 0))
        delays += [max(at - now, 0) for at in self._in_flight_expiries()]
        if self.metadata.need_update and not self.metadata.in_flight:
            delays.append(self._metadata_backoff_left(now))
        if self.idempotence is not None and not self.idempotence.has_producer_id and not self._pid_request_pending:
            delays.append(max(self._pid_retry_at - now, 0))
        if delays:
            self.wakeup(min(delays))

    def _in_flight_expiries(self) -> list[int]:
        return [b.created_ms + self.config.delivery_timeout_ms for b in self.in_flight_batches]

    # -- nodes --------------------------------------------------------------------------------
    def least_loaded_node(self) -> int | None:
        nodes = self.metadata.nodes()
        if not nodes:
            return None
        self._rotation += 1
        order = [nodes[(self._rotation + i) % len(nodes)] for i in range(len(nodes))]
        return min(order, key=lambda n: (n in self.failed_nodes, self.in_flight_per_node.get(n, 0)))

    def _send(self, node: int, request: object, on_answer, summary: dict) -> None:
        self.in_flight_per_node[node] = self.in_flight_per_node.get(node, 0) + 1

        def answered(answer: object | None) -> None:
            self.in_flight_per_node[node] -= 1
            if answer is None:
                self.failed_nodes.add(node)
            else:
                self.failed_nodes.discard(node)
            if not self.stopped:
                on_answer(answer)
                self.wakeup()
        self.producer.client.send(f"broker-{node}", request, answered, timeout_ms=self.config.request_timeout_ms,
                                  summary={"producer": self.producer.node, **summary})

    # -- metadata -------------------------------------------------------------------------------
    def _metadata_backoff_left(self, now: int) -> int:
        if self.metadata.last_attempt_ms is None:
            return 0
        return max(self.metadata.last_attempt_ms + self.config.retry_backoff_ms - now, 0)

    def _maybe_request_metadata(self) -> None:
        md = self.metadata
        if not md.need_update or md.in_flight or self._metadata_backoff_left(self.now_ms) > 0:
            return
        node = self.least_loaded_node()
        if node is None:
            return
        md.in_flight, md.last_attempt_ms = True, self.now_ms

        def on_answer(answer: object | None) -> None:
            md.in_flight = False
            if isinstance(answer, MetadataResponse):
                md.update(answer, self.now_ms)
        self._send(node, MetadataRequest(None), on_answer, {"topics": None})

    # -- InitProducerId ---------------------------------------------------------------------------
    def _maybe_request_producer_id(self) -> None:
        idem = self.idempotence
        if idem is None or idem.has_producer_id or self._pid_request_pending or self.now_ms < self._pid_retry_at:
            return
        node = self.least_loaded_node()
        if node is None:
            return
        self._pid_request_pending = True

        def on_answer(answer: object | None) -> None:
            self._pid_request_pending = False
            if isinstance(answer, InitProducerIdResponse) and answer.error == Errors.NONE:
                idem.producer_id, idem.producer_epoch = answer.producer_id, answer.producer_epoch
            else:
                self._pid_retry_at = self.now_ms + self.config.retry_backoff_ms
        self._send(node, InitProducerIdRequest(), on_answer, {})

    # -- produce ----------------------------------------------------------------------------------
    def _send_produce(self, node: int, batches: list[ProducerBatch]) -> None:
        codec, level = self.config.compression_codec, self.config.compression_level
        self._next_request_id += 1
        data = []
        for batch in batches:
            records = batch.encode(codec, level)
            if batch.attempts == 0:   # built once (ProducerBatch.close); a retry resends these bytes
                self.accumulator.update_compression_ratio(batch, len(records))
            data.append(ProducePartitionData(batch.topic, batch.partition, records))
            batch.leader_epoch = self.metadata.leader_epoch_for(batch.tp)
            self._count_send(node, batch, len(records))
        request = ProduceRequest.for_partitions(self._next_request_id, self.config.acks,
                                                self.config.request_timeout_ms, data)
        summary = {"request_id": self._next_request_id, "acks": self.config.acks,
                   "partitions": [{"topic": b.topic, "partition": b.partition, "records": b.record_count,
                                   "base_sequence": b.base_sequence} for b in batches]}
        self.stats["produce-request-total"] += 1
        if self.config.acks == 0:
            self.producer.client.send_no_answer(f"broker-{node}", request, {"producer": self.producer.node, **summary})
            for batch in batches:
                self._complete(batch, -1)
            return
        for batch in batches:
            batch.in_flight = True
            self.in_flight_batches.append(batch)
        self._send(node, request, lambda answer: self._on_produce_answer(batches, answer), summary)

    def _count_send(self, node: int, batch: ProducerBatch, size: int) -> None:
        self.stats["record-send-total"] += batch.record_count
        self.stats["batch-send-total"] += 1
        self.stats["byte-total"] += size
        for record in batch.records:
            record.attempts += 1
        shown = batch.records if batch.record_count <= MAX_RECORDS_IN_EVENT else []
        self.producer.publish(ev.ProducerBatchSent(
            producer=self.producer.node, broker=node, topic=batch.topic, partition=batch.partition,
            records_count=batch.record_count, size_in_bytes=size, attempt=batch.attempts + 1,
            producer_id=batch.producer_id, producer_epoch=batch.producer_epoch, base_sequence=batch.base_sequence,
            records=[{"key": ev.text(r.key), "value": ev.text(r.value)} for r in shown]))

    def _on_produce_answer(self, batches: list[ProducerBatch], answer: object | None) -> None:
        by_tp = {}
        if isinstance(answer, ProduceResponse):
            by_tp = {(r.topic, r.partition): r for r in answer.partition_responses()}
        for batch in batches:
            batch.in_flight = False
            if batch in self.in_flight_batches:
                self.in_flight_batches.remove(batch)
            self.accumulator.muted.discard(batch.tp)
            response = by_tp.get(batch.tp)
            error = response.error if response is not None else Errors.NETWORK_EXCEPTION
            if batch.done:
                continue                     # expired while in flight: the answer comes too late
            if error == Errors.NONE and response is not None:     # NONE only comes from a response
                self._complete(batch, response.base_offset)
            else:
                self._handle_error(batch, error)
            if error in METADATA_ERRORS:
                self.metadata.need_update = True

    def _handle_error(self, batch: ProducerBatch, error: str) -> None:
        now = self.now_ms
        if self._can_retry(batch, error, now):
            if error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER and self.idempotence is not None:
                self.idempotence.on_out_of_order(batch)
            failed_attempt = batch.attempts + 1
            backoff = self.accumulator.reenqueue(batch, now, in_sequence_order=self.idempotence is not None)
            self.stats["record-retry-total"] += batch.record_count
            self.producer.publish(ev.ProducerBatchRetried(
                producer=self.producer.node, topic=batch.topic, partition=batch.partition, error=error,
                attempt=failed_attempt, backoff_ms=backoff, base_sequence=batch.base_sequence,
                records_count=batch.record_count))
            return
        message = f"The broker answered {error} for {batch.topic}-{batch.partition}"
        if error in RETRIABLE_ERRORS or error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER:
            message += f" and no retry is left (retries={self.config.retries}, " \
                       f"delivery.timeout.ms={self.config.delivery_timeout_ms})"
        if self.idempotence is not None:
            self.idempotence.on_failed(batch, written_maybe=error in MAYBE_WRITTEN_ERRORS)
        self._fail(batch, error, message)

    def _can_retry(self, batch: ProducerBatch, error: str, now: int) -> bool:
        if now - batch.created_ms >= self.config.delivery_timeout_ms or batch.attempts >= self.config.retries:
            return False
        if error == Errors.OUT_OF_ORDER_SEQUENCE_NUMBER:
            return self.idempotence is not None
        return error in RETRIABLE_ERRORS

    def _expire_batches(self, now: int) -> None:
        expired = [b for b in self.in_flight_batches if now - b.created_ms >= self.config.delivery_timeout_ms]
        for batch in expired:
            self.in_flight_batches.remove(batch)
        expired += self.accumulator.expired_batches(now)
        for batch in expired:
            if self.idempotence is not None:
                self.idempotence.on_failed(batch, written_maybe=True)
            self._fail(batch, Errors.REQUEST_TIMED_OUT,
                       f"Expiring {batch.record_count} record(s) for {batch.topic}-{batch.partition}: "
                       f"{now - batch.created_ms} ms has passed since batch creation "
                       f"(delivery.timeout.ms={self.config.delivery_timeout_ms})")

    # -- completion -----------------------------------------------------------------------------
    def _complete(self, batch: ProducerBatch, base_offset: int) -> None:
        batch.done = True
        if self.idempotence is not None:
            self.idempotence.on_acknowledged(batch)
        if base_offset >= 0:
            for offset, record in enumerate(batch.records, base_offset):
                record.acked, record.offset = True, offset
        else:   # no offsets known (acks=0)
            for record in batch.records:
                record.acked, record.offset = True, -1
        self.accumulator.deallocate(batch)
        self.producer.publish(ev.ProducerBatchAcknowledged(
            producer=self.producer.node, topic=batch.topic, partition=batch.partition, base_offset=base_offset,
            records_count=batch.record_count, attempts=batch.attempts + 1, base_sequence=batch.base_sequence))

    def _fail(self, batch: ProducerBatch, error: str, message: str) -> None:
        batch.done = True
        for record in batch.records:
            record.acked, record.error, record.error_message = False, error, message
        self.stats["record-error-total"] += batch.record_count
        self.accumulator.deallocate(batch)
        self.producer.publish(ev.ProducerBatchFailed(
            producer=self.producer.node, topic=batch.topic, partition=batch.partition, error=error,
            message=message, records_count=batch.record_count, attempts=batch.attempts + 1))
