"""The requests brokers (and the lab's admin commands) send to the KRaft controller, and its answers.

Kafka's names and fields, reduced to what the lab uses: BrokerRegistration (API 62) and
BrokerHeartbeat (API 63) from BrokerLifecycleManager, AlterPartition (API 56, KIP-497) from a
partition leader changing its ISR, CreateTopics (19) / CreatePartitions (37) / DeleteTopics (20)
forwarded from the admin side, AllocateProducerIds (67, KIP-730). In ZooKeeper mode none of these
exist: brokers and the controller write znodes instead.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class BrokerRegistrationRequest:
    broker_id: int
    incarnation_id: str            # a new one at every start (BrokerLifecycleManager's incarnationId)
    host: str
    rack: str | None = None
    previous_broker_epoch: int = -1


@dataclass(slots=True)
class BrokerRegistrationResponse:
    error: str
    broker_epoch: int = -1


@dataclass(slots=True)
class BrokerHeartbeatRequest:
    broker_id: int
    broker_epoch: int
    current_metadata_offset: int
    want_fence: bool = False
    want_shut_down: bool = False


@dataclass(slots=True)
class BrokerHeartbeatResponse:
    error: str
    is_caught_up: bool = False
    is_fenced: bool = True
    should_shut_down: bool = False


@dataclass(slots=True)
class AlterPartitionRequest:
    broker_id: int
    broker_epoch: int
    topic: str
    topic_id: str
    partition: int
    leader_epoch: int
    new_isr: list[int]
    partition_epoch: int


@dataclass(slots=True)
class AlterPartitionResponse:
    error: str
    topic: str = ""
    partition: int = -1
    leader: int = -1
    leader_epoch: int = -1
    isr: list[int] = field(default_factory=list)
    partition_epoch: int = -1


@dataclass(slots=True)
class CreateTopicsRequest:
    name: str
    assignment: list[list[int]]
    config: dict
    topic_id: str


@dataclass(slots=True)
class CreateTopicsResponse:
    error: str
    message: str = ""


@dataclass(slots=True)
class CreatePartitionsRequest:
    topic: str
    added: list[list[int]]


@dataclass(slots=True)
class DeleteTopicsRequest:
    topic: str


@dataclass(slots=True)
class ControllerResponse:
    """The answer to a request that carries nothing back but its error."""
    error: str
    message: str = ""


@dataclass(slots=True)
class AllocateProducerIdsRequest:
    broker_id: int
    broker_epoch: int


@dataclass(slots=True)
class AllocateProducerIdsResponse:
    error: str
    producer_id_start: int = -1
    producer_id_len: int = 0
