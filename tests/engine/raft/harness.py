"""A KRaft quorum on the real simulation, with no brokers: N voters (and observers), each a Node of its
own on one Network and Scheduler, each with a RaftClient over its own data directory.

The listener each client is given checks, as it is called, the listener contract: batches in offset
order with no gap, each offset once per incarnation; the harness keeps every node's commits so tests
can compare them across nodes and incarnations.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine import events as ev
from engine.network import Network
from engine.node import Node, World
from engine.protocol import RequestEnvelope
from engine.raft.client import RaftClient
from engine.raft.config import QuorumConfig
from engine.sim import RandomTree, Scheduler

Commit = tuple[int, int, tuple[bytes, ...], bool]     # (base offset, epoch, values, control)


@dataclass
class RecordingListener:
    node_id: int
    commits: list[Commit] = field(default_factory=list)
    leader_changes: list[tuple[int, int]] = field(default_factory=list)
    next_offset: int = 0

    def handle_commit(self, base_offset: int, epoch: int, values: list[bytes], control: bool) -> None:
        assert base_offset == self.next_offset, (
            f"node {self.node_id}: batch at {base_offset}, expected {self.next_offset} (gap or repeat)")
        assert values, f"node {self.node_id}: an empty batch at {base_offset}"
        self.commits.append((base_offset, epoch, tuple(values), control))
        self.next_offset = base_offset + len(values)

    def handle_leader_change(self, leader_id: int, epoch: int) -> None:
        if self.leader_changes:
            last_leader, last_epoch = self.leader_changes[-1]
            assert epoch > last_epoch or (epoch == last_epoch and last_leader < 0 <= leader_id), (
                f"node {self.node_id}: leader change {(leader_id, epoch)} after {(last_leader, last_epoch)}")
        self.leader_changes.append((leader_id, epoch))


class RaftNode:
    """One process: its Node, its current RaftClient and listener (a new pair per incarnation)."""

    def __init__(self, quorum: Quorum, node_id: int, name: str, is_voter: bool) -> None:
        self.quorum = quorum
        self.node_id = node_id
        self.name = name
        self.is_voter = is_voter
        self.log_dir = os.path.join(quorum.world.data_dir, name, "__cluster_metadata-0")
        self.process = Node(quorum.world, name, on_request=self._on_request, alive=False, incarnation=0)
        self.client: RaftClient | None = None
        self.listener: RecordingListener | None = None
        self.listeners: list[RecordingListener] = []      # one per incarnation

    @property
    def alive(self) -> bool:
        return self.process.alive

    @property
    def raft(self) -> RaftClient:
        assert self.client is not None
        return self.client

    def start(self) -> None:
        self.process.incarnation += 1
        self.process.come_up()
        self.listener = RecordingListener(self.node_id)
        self.listeners.append(self.listener)
        self.client = RaftClient(self.process, self.node_id, self.quorum.voter_names, self.log_dir,
                                 self.quorum.config, self.listener, is_voter=self.is_voter)
        self.client.start()

    def crash(self, *, power_loss: bool = False) -> None:
        self.process.go_down()
        self.raft.crash(power_loss=power_loss)

    def _on_request(self, src: str, envelope: RequestEnvelope) -> None:
        def respond(body: object, summary: dict | None = None, *, foreground: bool = True) -> None:
            self.process.respond(src, envelope, body, summary, foreground=foreground)
        if self.client is None:
            return
        handler = self.client.request_handlers().get(type(envelope.body))
        assert handler is not None, f"{self.name}: no handler for {type(envelope.body).__name__}"
        handler(src, envelope.body, respond)


class Quorum:
    def __init__(self, data_dir: str, *, voters: int = 3, observers: int = 0, seed: int = 0,
                 config: QuorumConfig | None = None, min_delay_ms: int = 1, max_delay_ms: int = 3) -> None:
        self.scheduler = Scheduler()
        self.bus = ev.EventBus(lambda: self.scheduler.now_ms, lambda: self.scheduler.steps)
        self.events: list[ev.Event] = []
        self.bus.subscribe(self.events.append)
        self.random = RandomTree(seed)
        self.network = Network(self.scheduler, self.random.fork("network"), self.bus,
                               min_delay_ms=min_delay_ms, max_delay_ms=max_delay_ms)
        self.world = World(self.scheduler, self.network, self.bus, self.random, data_dir)
        self.config = config or QuorumConfig()
        self.voter_names = {i: f"controller-{i}" for i in range(1, voters + 1)}
        self.nodes: dict[int, RaftNode] = {i: RaftNode(self, i, name, True) for i, name in self.voter_names.items()}
        for j in range(observers):
            node_id = 101 + j
            self.nodes[node_id] = RaftNode(self, node_id, f"broker-{node_id}", False)

    # -- running -----------------------------------------------------------------------------
    def start(self) -> Quorum:
        for node in self.nodes.values():
            node.start()
        return self

    def run_for(self, ms: int) -> None:
        self.scheduler.run(until_ms=self.scheduler.now_ms + ms)

    def run_until(self, condition: Callable[[], bool], limit_ms: int = 30_000) -> bool:
        deadline = self.scheduler.now_ms + limit_ms
        return self.scheduler.run(until_ms=deadline, stop=condition, advance=False)

    # -- faults ------------------------------------------------------------------------------
    def crash(self, node_id: int, *, power_loss: bool = False) -> None:
        self.nodes[node_id].crash(power_loss=power_loss)

    def restart(self, node_id: int) -> None:
        self.nodes[node_id].start()

    def isolate(self, node_id: int) -> None:
        name = self.nodes[node_id].name
        for other in self.nodes.values():
            if other.node_id != node_id:
                self.network.cut(name, other.name)

    def partition(self, *groups: list[int]) -> None:
        """Cut every link between nodes of different groups."""
        for i, a in enumerate(groups):
            for b in groups[i + 1:]:
                for x in a:
                    for y in b:
                        self.network.cut(self.nodes[x].name, self.nodes[y].name)

    def heal_all(self) -> None:
        for link in self.network.cut_links():
            if len(link) == 2:
                self.network.heal(link[0], link[1])

    # -- looking -----------------------------------------------------------------------------
    def running(self) -> list[RaftNode]:
        return [n for n in self.nodes.values() if n.alive]

    def leaders(self) -> list[RaftNode]:
        return [n for n in self.running() if n.raft.is_leader()]

    def leader(self) -> RaftNode | None:
        """The running leader of the highest epoch, if any."""
        leaders = sorted(self.leaders(), key=lambda n: n.raft.epoch)
        return leaders[-1] if leaders else None

    def has_stable_leader(self) -> bool:
        """One leader whose epoch every running voter has, and which every running voter follows."""
        leader = self.leader()
        if leader is None:
            return False
        epoch = leader.raft.epoch
        return all(n.raft.leader_and_epoch() == (leader.node_id, epoch) for n in self.running())

    def committed_values(self, node_id: int) -> list[tuple[int, bytes]]:
        """(offset, value) of the data records (not control) the node's current listener was handed."""
        listener = self.nodes[node_id].listener
        assert listener is not None
        return [(base + i, v) for base, _, values, control in listener.commits if not control
                for i, v in enumerate(values)]

    def log_records(self, node_id: int) -> list[tuple[int, int, bytes, bool]]:
        """(offset, epoch, value, control) of every record in the node's log, committed or not."""
        out = []
        for batch in self.nodes[node_id].raft.metadata_log.batches():
            for i, value in enumerate(batch.records):
                out.append((batch.base_offset + i, batch.epoch, value, batch.is_control))
        return out

    def events_of(self, kind: type[ev.Event]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]
