"""InitProducerId on the broker: hand an idempotent producer its producer id and epoch.

ZooKeeper-mode Kafka (ZkProducerIdManager): each broker claims a block of 1000 ids by a
conditional write of the node `/latest_producer_id_block` ({"version": 1, "broker": id,
"block_start": first, "block_end": last}); blocks never overlap, so no two producers get the same
id whichever broker they ask. The broker then hands out the ids of its block one by one; a
restarted broker claims a fresh block (the rest of the old one is never used). A producer without
a transactional id always gets a new id with epoch 0.

Importing this module registers the handler in the broker's REQUEST_HANDLERS.
"""
from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from engine import events as ev
from engine.broker.broker import REQUEST_HANDLERS
from engine.protocol import InitProducerIdRequest, InitProducerIdResponse
from engine.metadata.store import BadVersionError, NodeExistsError

if TYPE_CHECKING:
    from engine.broker.broker import Broker

PRODUCER_ID_BLOCK_PATH = "/latest_producer_id_block"
PRODUCER_ID_BLOCK_SIZE = 1000


@dataclass(slots=True)
class _Block:
    incarnation: int
    next_id: int
    block_end: int


_blocks: weakref.WeakKeyDictionary[Broker, _Block] = weakref.WeakKeyDictionary()


def claim_block(broker: Broker) -> tuple[int, int]:
    """Write the next block of ids to the metadata store for `broker`; returns (first, last)."""
    store = broker.store
    while True:
        if not store.exists(PRODUCER_ID_BLOCK_PATH):
            data = {"version": 1, "broker": broker.id, "block_start": 0, "block_end": PRODUCER_ID_BLOCK_SIZE - 1}
            try:
                store.create(PRODUCER_ID_BLOCK_PATH, data)
                return 0, PRODUCER_ID_BLOCK_SIZE - 1
            except NodeExistsError:
                continue
        latest, version = store.get(PRODUCER_ID_BLOCK_PATH)
        start = latest["block_end"] + 1
        data = {"version": 1, "broker": broker.id, "block_start": start,
                "block_end": start + PRODUCER_ID_BLOCK_SIZE - 1}
        try:
            store.set(PRODUCER_ID_BLOCK_PATH, data, expected_version=version)
            return start, data["block_end"]
        except BadVersionError:
            continue


def next_producer_id(broker: Broker) -> int:
    block = _blocks.get(broker)
    if block is None or block.incarnation != broker.incarnation or block.next_id > block.block_end:
        start, end = claim_block(broker)
        block = _blocks[broker] = _Block(broker.incarnation, start, end)
    producer_id = block.next_id
    block.next_id += 1
    return producer_id


def handle_init_producer_id(broker: Broker, src: str, request: InitProducerIdRequest,
                            respond: Callable[..., None]) -> None:
    if request.transactional_id is not None:
        respond(InitProducerIdResponse("INVALID_REQUEST"),
                {"error": "the lab has no transaction coordinator"})
        return
    producer_id = next_producer_id(broker)
    broker.publish(ev.ProducerIdAllocated(broker=broker.id, client=src, producer_id=producer_id, producer_epoch=0))
    respond(InitProducerIdResponse("NONE", producer_id, 0), {"producer_id": producer_id, "producer_epoch": 0})


REQUEST_HANDLERS[InitProducerIdRequest] = handle_init_producer_id
