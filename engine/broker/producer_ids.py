"""InitProducerId on the broker: hand an idempotent producer its producer id and epoch.

ZooKeeper-mode Kafka (ZkProducerIdManager): each broker claims a block of 1000 ids by a
conditional write of the node `/latest_producer_id_block` ({"version": 1, "broker": id,
"block_start": first, "block_end": last}); blocks never overlap, so no two producers get the same
id whichever broker they ask. The broker then hands out the ids of its block one by one; a
restarted broker claims a fresh block (the rest of the old one is never used: the broker builds a
new ProducerIdManager at each start). A producer without a transactional id always gets a new id
with epoch 0 (TransactionCoordinator.handleInitProducerId).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from engine import events as ev
from engine.common.errors import Errors
from engine.metadata.store import BadVersionError, MetadataStore, NodeExistsError
from engine.protocol import InitProducerIdRequest, InitProducerIdResponse

if TYPE_CHECKING:
    from engine.node import BrokerContext

PRODUCER_ID_BLOCK_PATH = "/latest_producer_id_block"
PRODUCER_ID_BLOCK_SIZE = 1000


def claim_block(store: MetadataStore, broker_id: int) -> tuple[int, int]:
    """Write the next block of ids to the metadata store for `broker_id`; returns (first, last)."""
    while True:
        if not store.exists(PRODUCER_ID_BLOCK_PATH):
            data = {"version": 1, "broker": broker_id, "block_start": 0, "block_end": PRODUCER_ID_BLOCK_SIZE - 1}
            try:
                store.create(PRODUCER_ID_BLOCK_PATH, data)
                return 0, PRODUCER_ID_BLOCK_SIZE - 1
            except NodeExistsError:
                continue
        latest, version = store.get(PRODUCER_ID_BLOCK_PATH)
        start = latest["block_end"] + 1
        data = {"version": 1, "broker": broker_id, "block_start": start,
                "block_end": start + PRODUCER_ID_BLOCK_SIZE - 1}
        try:
            store.set(PRODUCER_ID_BLOCK_PATH, data, expected_version=version)
            return start, data["block_end"]
        except BadVersionError:
            continue


class ProducerIdManager:
    """One broker incarnation's block of producer ids, claimed when the first id is asked for."""

    def __init__(self, broker: BrokerContext, allocate: Callable[[Callable[[int, int], None]], None] | None = None
                 ) -> None:
        """`allocate(on_done)`: KRaft mode's way to a block, an AllocateProducerIds request to the active
        controller (which writes a ProducerIdsRecord, KIP-730); None: ZooKeeper mode's conditional write."""
        self.broker = broker
        self.next_id = 0
        self.block_end = -1     # no block yet
        self._allocate = allocate
        self._waiting: list[tuple[str, Callable[..., None]]] = []

    def next_producer_id(self) -> int:
        if self.next_id > self.block_end:
            self.next_id, self.block_end = claim_block(self.broker.store, self.broker.id)
        producer_id = self.next_id
        self.next_id += 1
        return producer_id

    def handle(self, src: str, request: InitProducerIdRequest, respond: Callable[..., None]) -> None:
        """The broker's InitProducerId handler."""
        if request.transactional_id is not None:
            respond(InitProducerIdResponse(Errors.INVALID_REQUEST), {"error": "the lab has no transaction coordinator"})
            return
        if self._allocate is not None and self.next_id > self.block_end:
            self._waiting.append((src, respond))
            if len(self._waiting) == 1:
                self._allocate(self._block_allocated)
            return
        self._answer(src, respond)

    def _block_allocated(self, start: int, length: int) -> None:
        waiting, self._waiting = self._waiting, []
        if length <= 0:
            for _, respond in waiting:
                respond(InitProducerIdResponse(Errors.COORDINATOR_NOT_AVAILABLE),
                        {"error": Errors.COORDINATOR_NOT_AVAILABLE})
            return
        self.next_id, self.block_end = start, start + length - 1
        for src, respond in waiting:
            self.handle(src, InitProducerIdRequest(None), respond)

    def _answer(self, src: str, respond: Callable[..., None]) -> None:
        producer_id = self.next_producer_id()
        self.broker.publish(ev.ProducerIdAllocated(broker=self.broker.id, client=src, producer_id=producer_id,
                                                   producer_epoch=0))
        respond(InitProducerIdResponse(Errors.NONE, producer_id, 0), {"producer_id": producer_id, "producer_epoch": 0})
