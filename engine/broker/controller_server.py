"""A dedicated KRaft controller (`process.roles=controller`): a node that only runs the metadata quorum.

Kafka's ControllerServer: a Raft client that votes in the `__cluster_metadata` quorum, writing the
log into its own data dir, and a QuorumController that is active while that client leads. It holds
no partitions and answers no client request. In combined mode (`process.roles=broker,controller`)
the same two parts live in a broker instead (engine/broker/kraft_metadata.py).

Data dir: `controller-<id>/__cluster_metadata-0/` (segments, leader-epoch-checkpoint) and
`controller-<id>/__cluster_metadata-0/quorum-state`.
"""
from __future__ import annotations

import os
import random
from collections.abc import Callable
from typing import Any

from engine import events as ev
from engine.common.errors import Errors
from engine.controller.quorum_controller import QuorumController
from engine.node import Node, World
from engine.raft.client import RaftClient

METADATA_DIR = "__cluster_metadata-0"


class ControllerServer:
    def __init__(self, world: World, node_id: int, voters: dict[int, str], quorum_config: Any, config: Any) -> None:
        self.world = world
        self.id = node_id
        self.node = voters[node_id]
        self.voters = voters
        self.quorum_config = quorum_config
        self.config = config
        self.data_dir = os.path.join(world.data_dir, self.node)
        self.process = Node(world, self.node, on_request=self._on_request, alive=False, incarnation=0)
        self.raft: Any = None
        self.controller: QuorumController | None = None
        self._handlers: dict[type, Callable[..., None]] = {}
        os.makedirs(self.data_dir, exist_ok=True)

    # -- the host a QuorumController runs in --------------------------------------------------------
    @property
    def alive(self) -> bool:
        return self.process.alive

    @property
    def now_ms(self) -> int:
        return self.world.scheduler.now_ms

    def publish(self, event: ev.Event) -> None:
        self.world.bus.publish(event)

    def schedule(self, delay_ms: int, action: Callable[[], None], label: str, *, foreground: bool = True) -> Any:
        return self.process.schedule(delay_ms, action, label, foreground=foreground)

    def cancel(self, entry: Any) -> None:
        self.world.scheduler.cancel(entry)

    def rng(self, name: str) -> random.Random:
        return self.process.rng(name)

    # -- life cycle ---------------------------------------------------------------------------------
    def start(self, *, restarted: bool = False) -> None:
        self.process.incarnation += 1
        self.process.come_up()
        self.raft = RaftClient(self.process, self.id, self.voters, os.path.join(self.data_dir, METADATA_DIR),
                               self.quorum_config, self, is_voter=True)
        self.controller = QuorumController(self, self.id, self.raft, self.config)
        self._handlers = {**self.raft.request_handlers(), **self.controller.request_handlers()}
        self.publish(ev.ControllerNodeStarted(node=self.id, restarted=restarted))
        self.raft.start()

    def crash(self) -> None:
        self.process.go_down()
        if self.controller is not None:
            self.controller.stop()
        if self.raft is not None:
            self.raft.crash()
        self.publish(ev.ControllerNodeCrashed(node=self.id))

    def shutdown(self) -> None:
        if self.alive:
            self.process.go_down()
            if self.raft is not None:
                self.raft.close()

    # -- the Raft listener: the controller is the only state machine here -----------------------------
    def handle_commit(self, base_offset: int, epoch: int, values: list[bytes], control: bool) -> None:
        if self.controller is not None:
            self.controller.handle_commit(base_offset, epoch, values, control)

    def handle_leader_change(self, leader_id: int, epoch: int) -> None:
        if self.controller is not None:
            self.controller.handle_leader_change(leader_id, epoch)

    def _on_request(self, src: str, envelope: Any) -> None:
        handler = self._handlers.get(type(envelope.body))

        def respond(body: object, summary: dict | None = None, *, foreground: bool = True) -> None:
            self.process.respond(src, envelope, body, summary, foreground=foreground)
        if handler is None:
            respond(None, {"error": Errors.INVALID_REQUEST})
            return
        handler(src, envelope.body, respond)
