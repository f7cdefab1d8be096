"""The world a node lives in, and the node itself: one process on the simulated network.

Brokers and clients are peers on the network (Maelstrom's picture): each *has* a `Node` and reaches
the rest of the simulation only through it — never through the `Cluster` facade. What a node may ask
of its world is small, and the same for every kind of node:

- the virtual clock (`now_ms`) and the records' wall clock (`record_time_ms`: EPOCH_MS + now_ms);
- timers of this incarnation (`schedule`/`cancel`): a crash ends the incarnation, and every timer
  and every answer meant for the old one is dropped — a restarted process remembers nothing;
- the event bus (`publish`), seeded randomness by name (`rng`), the data dir;
- requests to other nodes with correlation ids (`send`), each with an optional time-out that
  answers `None` (the client's request time-out), and answers to requests it got (`respond`).

`World` holds the simulation's services (scheduler, network, bus, random tree, data dir); the
facade builds one and hands it to every node it creates. Seeds are forked by *name*
(`RandomTree.fork`), so which code asks for a stream never changes what it draws.
"""
from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from random import Random
from typing import TYPE_CHECKING, Any, Protocol

from engine import events as ev
from engine.network import Network
from engine.protocol import RequestEnvelope, ResponseEnvelope
from engine.sim import RandomTree, Scheduler
from engine.sim.scheduler import Scheduled

if TYPE_CHECKING:
    from engine.metadata.store import MetadataStore
    from engine.metadata.view import MetadataReader

# Record timestamps are virtual too: the cluster's clock starts at this instant (2023-11-14).
EPOCH_MS = 1_700_000_000_000

OnResponse = Callable[[object | None], None]
OnRequest = Callable[[str, RequestEnvelope], None]


@dataclass
class World:
    """The simulation's services, shared by every node of one cluster."""
    scheduler: Scheduler
    network: Network
    bus: ev.EventBus
    random: RandomTree
    data_dir: str
    fsync: bool = False            # real fsync on flush (crashes are simulated, so off by default)
    epoch_ms: int = EPOCH_MS
    # (`Random`, not `random.Random`: inside World the name `random` is the field above.)
    _streams: dict[str, Random] = field(default_factory=dict, repr=False)

    @property
    def now_ms(self) -> int:
        return self.scheduler.now_ms

    def record_time_ms(self) -> int:
        """Wall-clock time as records and retention see it: virtual, from `epoch_ms`."""
        return self.epoch_ms + self.scheduler.now_ms

    def stream(self, name: str) -> Random:
        """The world's one seeded stream of this name, shared by every node that draws from it
        (the brokers' controller-election delays, replica assignment, group member ids): one
        sequence of numbers, whichever node draws next — unlike `Node.rng`, a fresh fork per call."""
        stream = self._streams.get(name)
        if stream is None:
            stream = self._streams[name] = self.random.fork(name)
        return stream


class NodeContext(Protocol):
    """What a broker part or a client may ask of the world it runs in. Nothing else."""
    @property
    def name(self) -> str: ...
    @property
    def incarnation(self) -> int: ...

    @property
    def now_ms(self) -> int: ...
    def record_time_ms(self) -> int: ...
    def schedule(self, delay_ms: int, action: Callable[[], None], label: str, *,
                 foreground: bool = True) -> Scheduled: ...
    def cancel(self, timer: Scheduled | None) -> None: ...
    def publish(self, event: ev.Event) -> None: ...
    def rng(self, name: str) -> random.Random: ...


class ReplicaLog(Protocol):
    """What a broker part may read of a replica's log (engine.storage.log.Log)."""
    @property
    def log_start_offset(self) -> int: ...
    def records_from(self, offset: int) -> list[Any]: ...


class PartitionView(Protocol):
    """What a broker's other parts (the group coordinator) may do with one of its replicas: read its
    role and its log, append as its leader and wait for the ISR to have it. The one implementation is
    engine.replication.partition.Partition, which they never import (replication is their sibling)."""
    topic: str
    partition: int
    role: str                            # "leader", "follower" or "none"

    @property
    def log(self) -> ReplicaLog: ...
    def append_as_leader(self, records: bytes, acks: int) -> Any: ...   # an AppendResult: .error, offsets
    def wait_for_acks(self, result: Any, respond: Callable[[str, int], None], timeout_ms: int) -> None: ...


class BrokerContext(NodeContext, Protocol):
    """What a broker's parts — a replica (Partition), a replica fetcher, the controller, the group
    coordinator — ask of the broker they run in (engine/broker/broker.py is the one implementation).
    They never reach past it to other brokers or to the facade."""
    id: int
    config: Any                          # the broker's settings, Kafka's names (engine.config.BrokerConfig)
    cluster_config: Any                  # how the lab runs it: the truncation mode, fsync (ClusterConfig)
    store: MetadataStore                 # ZooKeeper (engine.metadata.zk reads it)
    metadata: MetadataReader             # what it reads about topics and brokers, in either mode (metadata/view.py)
    partitions: dict[tuple[str, int], Any]   # its replicas, engine.replication.partition.Partition
    durable_offsets: dict[tuple[str, int], int]

    @property
    def alive(self) -> bool: ...
    @property
    def fetchers_paused(self) -> bool: ...
    def is_broker_registered(self, broker_id: int) -> bool: ...
    def send_to_broker(self, broker_id: int, request: object, summary: dict, *, foreground: bool,
                       on_response: Callable[[object], None]) -> None: ...
    def complete_delayed_fetches(self, topic: str, partition: int) -> None: ...
    def complete_delayed_follower_reads(self, topic: str, partition: int) -> None: ...
    def stream(self, name: str) -> random.Random: ...     # the world's shared stream (World.stream)


class Node:
    """One process on the network: its incarnation, its timers, its requests in flight.

    A node starts up (`alive`) unless told otherwise. `go_down()` ends the incarnation (a crash
    or a clean stop), `come_up()` starts the next one."""

    def __init__(self, world: World, name: str, *, on_request: OnRequest | None = None,
                 alive: bool = True, incarnation: int = 1) -> None:
        self.world = world
        self.name = name
        self.alive = alive
        self.incarnation = incarnation
        self._on_request = on_request
        self._next_correlation = 0
        self._pending: dict[int, tuple[OnResponse, Scheduled | None]] = {}
        world.network.attach(name, self._receive)
        if not alive:
            world.network.set_up(name, False)

    # -- the world, as this node sees it -------------------------------------------------------
    @property
    def now_ms(self) -> int:
        return self.world.scheduler.now_ms

    def record_time_ms(self) -> int:
        return self.world.record_time_ms()

    def publish(self, event: ev.Event) -> None:
        self.world.bus.publish(event)

    def rng(self, name: str) -> random.Random:
        """A new seeded stream by name (RandomTree.fork): the same name always starts the same
        numbers, so each call starts over — take it once per purpose and keep it. A stream several
        nodes draw from in turn is World.stream."""
        return self.world.random.fork(name)

    def schedule(self, delay_ms: int, action: Callable[[], None], label: str, *,
                 foreground: bool = True, guard: Callable[[], bool] | None = None) -> Scheduled:
        """Run `action` after `delay_ms` if this incarnation is still alive then (and `guard()`,
        when given, still holds): a crashed process's timers never fire."""
        incarnation = self.incarnation

        def run() -> None:
            if self.alive and self.incarnation == incarnation and (guard is None or guard()):
                action()
        return self.world.scheduler.schedule(delay_ms, run, label=f"{self.name}: {label}", foreground=foreground)

    def cancel(self, timer: Scheduled | None) -> None:
        self.world.scheduler.cancel(timer)

    def is_up(self, node: str) -> bool:
        """Whether `node`'s process is running: a connection to a down process is refused at once."""
        return self.world.network.is_up(node)

    # -- requests and answers --------------------------------------------------------------------
    def send(self, dst: str, request: object, on_response: OnResponse, *, timeout_ms: int | None = None,
             summary: dict | None = None, foreground: bool = True) -> int:
        """Send `request`; its answer reaches `on_response(body)`, or `on_response(None)` after
        `timeout_ms` if none came (no time-out when None: the broker-to-broker channels, whose
        senders re-send on their own schedule)."""
        self._next_correlation += 1
        correlation = self._next_correlation
        timer = None
        if timeout_ms is not None:
            timer = self.world.scheduler.schedule(
                timeout_ms, lambda: self._time_out(correlation), label=f"{self.name}: request time-out",
                foreground=foreground)
        self._pending[correlation] = (on_response, timer)
        self.world.network.send(self.name, dst, RequestEnvelope(correlation, request, self.incarnation),
                                summary or {}, foreground=foreground)
        return correlation

    def send_no_answer(self, dst: str, request: object, summary: dict | None = None) -> None:
        """acks=0 style: put the request on the wire and expect nothing back."""
        self.world.network.send(self.name, dst, RequestEnvelope(0, request, self.incarnation), summary or {})

    def respond(self, dst: str, request: RequestEnvelope, body: object, summary: dict | None = None, *,
                foreground: bool = True) -> None:
        """Answer `request` (from `dst`), if this process is still running."""
        if self.alive:
            self.world.network.send(self.name, dst, ResponseEnvelope(request.correlation, body, request.incarnation),
                                    summary or {}, foreground=foreground)

    def in_flight(self) -> int:
        return len(self._pending)

    def request_timers(self) -> list:
        """The time-outs of the requests still waiting for an answer (those sent with one)."""
        return [timer for _, timer in self._pending.values() if timer is not None and not timer.cancelled]

    def _receive(self, src: str, message: object) -> None:
        if not self.alive:
            return
        if isinstance(message, ResponseEnvelope):
            if message.incarnation != self.incarnation:
                return
            entry = self._pending.pop(message.correlation, None)
            if entry is not None:
                callback, timer = entry
                if timer is not None:
                    self.world.scheduler.cancel(timer)
                callback(message.body)
            return
        if self._on_request is not None:
            envelope = message if isinstance(message, RequestEnvelope) else RequestEnvelope(0, message, 0)
            self._on_request(src, envelope)

    def _time_out(self, correlation: int) -> None:
        entry = self._pending.pop(correlation, None)
        if entry is not None and self.alive:
            entry[0](None)

    # -- life cycle ---------------------------------------------------------------------------------
    def go_down(self) -> None:
        """The process stops: its incarnation ends, nothing it was waiting for will reach it."""
        self.alive = False
        self.incarnation += 1
        for _, timer in self._pending.values():
            if timer is not None:
                self.world.scheduler.cancel(timer)
        self._pending.clear()
        self.world.network.set_up(self.name, False)

    def come_up(self) -> None:
        """The next incarnation starts."""
        self.alive = True
        self.world.network.set_up(self.name, True)
