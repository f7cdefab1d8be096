"""The facade's own producer: what `Cluster.produce` and `Cluster.produce_batch` send through.

A client node ("client") that sends every call as ONE ProduceRequest with one batch, to the
partition's leader, and never retries: Kafka's console producer with `linger.ms=0`, `retries=0`
and idempotence off. The answer comes later, as an event (ProduceAcknowledged, ProduceFailed);
`request.timeout.ms` without one fails the send with REQUEST_TIMED_OUT. With `acks=0` nothing
comes back: the send counts as acknowledged (offset -1) the moment it is on the wire.

Unlike `Producer` (producer.py) it has no metadata of its own. What it knows of the cluster, the
facade hands in: the leader of a partition and the partitions that have one, read fresh from the
metadata store at each send — the lab's idealised client, never behind the cluster. Without a
partition, a key picks one by murmur2 and a record with neither goes to the null-key partitioner
(lab_client_partitioner.py: sticky by default, KIP-794), drawing from the seed's "partitioner" fork.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import cast

from engine import events as ev
from engine.clients.lab_client_partitioner import STICKY, LabClientPartitioner
from engine.common.errors import Errors
from engine.node import Node, World
from engine.produced_log import ProducedLog
from engine.protocol import ProduceRequest, ProduceResponse
from engine.storage import record_batch as rb

CLIENT = "client"


@dataclass
class Produced:
    """What the producer knows about one record it sent (the scenario's "produced" list)."""
    request_id: int
    topic: str
    partition: int
    key: bytes | None
    value: bytes | None
    acks: int
    tag: object = None
    acked: bool | None = None      # None while waiting for an answer
    offset: int = -1
    error: str | None = None


class SimpleProducer:
    def __init__(self, world: World, *, request_timeout_ms: int, leader_of: Callable[[str, int], int],
                 available_partitions: Callable[[str, int], list[int]], name: str = CLIENT) -> None:
        """`leader_of(topic, partition)` (-1: none) and `available_partitions(topic, count)` (those
        with a leader, in order) are the facade's fresh metadata."""
        self.client = Node(world, name)
        self.request_timeout_ms = request_timeout_ms
        self.leader_of = leader_of
        self.available_partitions = available_partitions
        self.partitioner = LabClientPartitioner(self.client.rng("partitioner"))
        self.produced = ProducedLog()   # the newest sends and every one unanswered (produced_log.py)

    def produce(self, topic: str, partitions: int, key: bytes | None, value: bytes | None, *,
                partition: int | None, acks: int, tag: object = None, headers: list | None = None,
                partitioner: str = STICKY) -> Produced:
        """One record, alone in its batch. `partition` None: the key's, or the null-key partitioner's
        (the caller has checked `partitioner` and an explicit partition against `partitions`)."""
        now = self.client.record_time_ms()
        batch = rb.encode_batch([(key, value, now, headers or ())], base_timestamp=now)
        if partition is None:
            partition = self.partitioner.choose(topic, key, partitions, self.available_partitions(topic, partitions),
                                                len(batch), partitioner)
        record = Produced(self.produced.sent + 1, topic, partition, key, value, acks, tag)
        self.produced.append(record)
        self._send(record, batch, {"request_id": record.request_id, "topic": topic, "partition": partition,
                                   "acks": acks, "key": ev.text(key), "value": ev.text(value)})
        return record

    def produce_batch(self, topic: str, partition: int, records: list[tuple[bytes | None, bytes | None]], *,
                      acks: int, tag: object = None) -> Produced:
        """Several records as one batch in one request; the Produced entry stands for the whole
        batch (its offset is the batch's first offset)."""
        batch = rb.encode_batch(records, base_timestamp=self.client.record_time_ms())
        record = Produced(self.produced.sent + 1, topic, partition, None, None, acks, tag)
        self.produced.append(record)
        self._send(record, batch, {"request_id": record.request_id, "topic": topic,
                                   "partition": partition, "acks": acks, "records": len(records)})
        return record

    def request_timers(self) -> list:
        """The time-outs of the produce requests still unanswered, in the order they were sent."""
        return self.client.request_timers()

    def _send(self, record: Produced, batch: bytes, summary: dict) -> None:
        leader = self.leader_of(record.topic, record.partition)
        if leader < 0:
            self._failed(record, Errors.LEADER_NOT_AVAILABLE)
            return
        request = ProduceRequest(record.request_id, record.acks, self.request_timeout_ms,
                                 record.topic, record.partition, batch)
        if record.acks == 0:
            self.client.send_no_answer(f"broker-{leader}", request, summary)
            record.acked = True  # acks=0: "sent" is all the producer ever learns
            self.client.publish(ev.ProduceAcknowledged(request_id=record.request_id, topic=record.topic,
                                                       partition=record.partition, offset=-1, acks=0))
        else:
            # the network carries any body; a ProduceRequest's answer is a ProduceResponse (None: timed out)
            self.client.send(f"broker-{leader}", request,
                             lambda answer: self._on_answer(record, cast(ProduceResponse | None, answer)),
                             timeout_ms=self.request_timeout_ms, summary=summary)

    def _on_answer(self, record: Produced, answer: ProduceResponse | None) -> None:
        if answer is None:
            self._failed(record, Errors.REQUEST_TIMED_OUT)
        elif answer.error == Errors.NONE:
            record.acked, record.offset = True, answer.base_offset
            self.client.publish(ev.ProduceAcknowledged(request_id=record.request_id, topic=record.topic,
                                                       partition=record.partition, offset=answer.base_offset,
                                                       acks=record.acks))
        else:
            self._failed(record, answer.error)

    def _failed(self, record: Produced, error: str) -> None:
        record.acked, record.error = False, error
        self.client.publish(ev.ProduceFailed(request_id=record.request_id, topic=record.topic,
                                             partition=record.partition, error=error, acks=record.acks))
