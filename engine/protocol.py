"""The requests brokers and clients send each other, as dataclasses with Kafka's field names.

Only the fields the lab uses are kept (see Kafka's message JSONs: FetchRequest.json, ...).
Records travel as the raw bytes of record batches, exactly as on the wire.
"""
from __future__ import annotations

from dataclasses import dataclass, field

CONSUMER_REPLICA_ID = -1


@dataclass(slots=True)
class FetchPartition:
    topic: str
    partition: int
    fetch_offset: int
    current_leader_epoch: int
    log_start_offset: int = -1
    partition_max_bytes: int = 1024 * 1024


@dataclass(slots=True)
class FetchRequest:
    replica_id: int                    # the follower's broker id (-1 for a consumer)
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    partitions: list[FetchPartition]
    isolation_level: int = 0          # consumers: 0 read_uncommitted; followers ignore it
    # A consumer's client.rack (FetchRequest v11+, KIP-392). None: the request carries no client
    # metadata (the lab's consumer without client.rack), so only the leader serves it, as before v11.
    rack_id: str | None = None


@dataclass(slots=True)
class FetchPartitionData:
    topic: str
    partition: int
    error: str
    high_watermark: int = -1
    log_start_offset: int = -1
    log_end_offset: int = -1          # not in Kafka's response; shown in the lab's views
    records: bytes = b""
    preferred_read_replica: int = -1  # KIP-392: the leader says "fetch from this broker" (no records then)


@dataclass(slots=True)
class FetchResponse:
    partitions: list[FetchPartitionData]


@dataclass(slots=True)
class ProducePartitionData:
    """One partition's records in a ProduceRequest (Kafka's topic_data[].partition_data[])."""
    topic: str
    partition: int
    records: bytes


@dataclass(slots=True)
class ProduceRequest:
    """One partition (topic, partition, records), or, as Kafka's producer sends them, several:
    then `partitions` lists them all and topic/partition/records are unused ("", -1, b"")."""
    request_id: int
    acks: int                          # 0, 1 or -1 (all)
    timeout_ms: int
    topic: str
    partition: int
    records: bytes
    partitions: list[ProducePartitionData] | None = None

    @classmethod
    def for_partitions(cls, request_id: int, acks: int, timeout_ms: int,
                       data: list[ProducePartitionData]) -> ProduceRequest:
        if len(data) == 1:
            return cls(request_id, acks, timeout_ms, data[0].topic, data[0].partition, data[0].records)
        return cls(request_id, acks, timeout_ms, "", -1, b"", list(data))

    def partition_data(self) -> list[ProducePartitionData]:
        if self.partitions is None:
            return [ProducePartitionData(self.topic, self.partition, self.records)]
        return list(self.partitions)


@dataclass(slots=True)
class ProducePartitionResponse:
    topic: str
    partition: int
    error: str
    base_offset: int = -1
    log_start_offset: int = -1


@dataclass(slots=True)
class ProduceResponse:
    """The answer to a ProduceRequest: the same shape as the request (one partition in the
    top-level fields, or all of them in `partitions`)."""
    request_id: int
    topic: str
    partition: int
    error: str
    base_offset: int = -1
    log_start_offset: int = -1
    partitions: list[ProducePartitionResponse] | None = None

    def partition_responses(self) -> list[ProducePartitionResponse]:
        if self.partitions is None:
            return [ProducePartitionResponse(self.topic, self.partition, self.error, self.base_offset,
                                             self.log_start_offset)]
        return list(self.partitions)


@dataclass(slots=True)
class EpochQuery:
    topic: str
    partition: int
    current_leader_epoch: int
    leader_epoch: int                  # the follower's latest epoch: where does it end on the leader?


@dataclass(slots=True)
class OffsetsForLeaderEpochRequest:
    replica_id: int
    partitions: list[EpochQuery]


@dataclass(slots=True)
class EpochEndOffset:
    topic: str
    partition: int
    error: str
    leader_epoch: int = -1
    end_offset: int = -1


@dataclass(slots=True)
class OffsetsForLeaderEpochResponse:
    partitions: list[EpochEndOffset]


@dataclass(slots=True)
class PartitionState:
    topic: str
    partition: int
    leader: int
    leader_epoch: int
    isr: list[int]
    replicas: list[int]
    partition_epoch: int = 0


@dataclass(slots=True)
class LeaderAndIsrRequest:
    controller_id: int
    controller_epoch: int
    partitions: list[PartitionState] = field(default_factory=list)


@dataclass(slots=True)
class LeaderAndIsrResponse:
    broker: int
    errors: dict[str, str] = field(default_factory=dict)


@dataclass(slots=True)
class StopReplicaPartitionState:
    topic: str
    partition: int
    leader_epoch: int
    delete_partition: bool          # true: the replica's log is deleted too (topic deletion, reassignment)


@dataclass(slots=True)
class StopReplicaRequest:
    """The controller tells a broker to stop a replica (StopReplicaRequest, v3's partition states)."""
    controller_id: int
    controller_epoch: int
    partitions: list[StopReplicaPartitionState] = field(default_factory=list)


@dataclass(slots=True)
class StopReplicaResponse:
    broker: int
    errors: dict[str, str] = field(default_factory=dict)    # "topic-partition" -> error; absent: NONE


_API_NAMES: dict[type, str] = {}


def api_name(message: object) -> str:
    """Kafka's API name of a request ("Fetch"), or the response's class name ("FetchResponse")."""
    message = getattr(message, "body", message)  # unwrap a broker's correlation envelope
    kind = type(message)
    name = _API_NAMES.get(kind)
    if name is None:  # once per message class: every message on the wire asks
        name = kind.__name__
        name = _API_NAMES[kind] = name[:-len("Request")] if name.endswith("Request") else name
    return name


@dataclass(slots=True)
class RequestEnvelope:
    """A request on the wire with the correlation id its answer will carry back, and the sender's
    incarnation (an answer meant for a crashed and restarted sender is dropped)."""
    correlation: int
    body: object
    incarnation: int


@dataclass(slots=True)
class ResponseEnvelope:
    correlation: int
    body: object
    incarnation: int


@dataclass(slots=True)
class MetadataRequest:
    topics: list[str] | None = None   # None: all topics


@dataclass(slots=True)
class PartitionMetadata:
    partition: int
    leader: int
    leader_epoch: int
    replicas: list[int]
    isr: list[int]


@dataclass(slots=True)
class TopicMetadata:
    topic: str
    error: str
    partitions: list[PartitionMetadata] = field(default_factory=list)


@dataclass(slots=True)
class MetadataResponse:
    brokers: list[int]
    controller_id: int
    topics: list[TopicMetadata]


@dataclass(slots=True)
class InitProducerIdRequest:
    """A producer asks for its id and epoch (idempotence); -1/-1 means "a new producer"."""
    transactional_id: str | None = None
    transaction_timeout_ms: int = 60000
    producer_id: int = -1
    producer_epoch: int = -1


@dataclass(slots=True)
class InitProducerIdResponse:
    error: str
    producer_id: int = -1
    producer_epoch: int = -1
