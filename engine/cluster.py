"""The `Cluster` facade: the one object everything else drives.

    from engine import Cluster
    cluster = Cluster(brokers=3, data_dir="/tmp/lab", seed=7, truncation="leader-epoch")
    cluster.create_topic("t", partitions=1, replication_factor=3)
    cluster.produce("t", key=b"k", value=b"m1", acks=-1)
    cluster.run_until_idle()
    cluster.read("t", 0)          # committed records (below the HW)
    cluster.kill_broker(cluster.leader_of("t", 0))

Everything runs on one scheduler in virtual time: `step()` runs exactly one action and returns
the events it caused; `run_for(ms)` and `run_until_idle()` loop over it. Commands (create a
topic, produce, kill a broker, cut a link…) take effect at the current virtual time. The same
seed and the same commands give the same events and the same bytes on disk.

The facade builds the world (engine/node.py), the brokers and the clients, and carries out commands;
it holds no state a broker or client needs. Its settings are engine/config.py's; read-only views of
the whole cluster (`cluster_state`, consumer groups) are engine/inspect's, a layer above it.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import replace
from itertools import chain
from typing import Any

from engine import events as ev
from engine.broker.auto_topic_creation import ensure_offsets_topic
from engine.broker.broker import CRASH_MODES, Broker
from engine.broker.controller_server import ControllerServer
from engine.clients.consumer import Consumer
from engine.clients.consumer_app import PollLoop
from engine.clients.lab_client_partitioner import NULL_KEY_PARTITIONERS, STICKY
from engine.clients.producer import Producer
from engine.clients.simple_producer import Produced, SimpleProducer
from engine.clients.sinks import ListSink
from engine.common.errors import Errors, KafkaError
from engine.common.topics import TopicExistsError, UnknownTopicError, check_collision, is_internal, validate_topic_name
from engine.config import BrokerConfig as BrokerConfig  # engine.config's, also importable from here
from engine.config import ClusterConfig as ClusterConfig
from engine.config import check_topic_config, quorum_voters, split_config
from engine.controller.messages import CreatePartitionsRequest, DeleteTopicsRequest
from engine.metadata import zk
from engine.metadata.image import MetadataImage
from engine.metadata.store import MetadataStore, NodeExistsError
from engine.metadata.view import MetadataReader, Topics, ZkMetadata
from engine.metadata.zk import TopicInfo
from engine.network import Network
from engine.node import EPOCH_MS, World
from engine.replication.assignment import assign_replicas, check_replica_assignment, place_replicas_striped
from engine.replication.fetcher import TRUNCATION_MODES
from engine.replication.reassignment import (
    PartitionReassignment,
    ReassignmentPlanError,
    parse_reassignment_plan,
    preferred_election_error,
    verify_reassignment,
)
from engine.sim import RandomTree, Scheduler
from engine.sim.scheduler import Scheduled
from engine.storage import record_batch as rb
from engine.storage.errors import InvalidConfigError

MAX_BROKERS = 9


class ClusterError(KafkaError):
    """A command that cannot be carried out; `kafka_name` is Kafka's error name where one exists,
    `field` the argument at fault where the command takes structured input (a reassignment plan's
    "partitions[0].replicas")."""
    error = Errors.INVALID_REQUEST

    def __init__(self, message: str, kafka_name: str = Errors.INVALID_REQUEST, field: str = "") -> None:
        super().__init__(message, error=kafka_name)
        self.field = field


class Cluster:
    def __init__(self, brokers: int = 3, data_dir: str = "lab-data", seed: int = 0, *,
                 config: dict | None = None, truncation: str | None = None,
                 on_event: Callable[[ev.Event], None] | None = None,
                 restore: Callable[[Cluster], None] | None = None, metadata: str | None = None) -> None:
        """`on_event` sees every event from the start (the brokers' start-up, the first controller).
        `restore` puts back a saved cluster's metadata before its brokers start (engine.persistence)."""
        if not 1 <= brokers <= MAX_BROKERS:
            raise ClusterError(f"A lab cluster has 1 to {MAX_BROKERS} brokers, not {brokers}")
        cfg = dict(config or {})
        if truncation is not None:
            cfg["truncation"] = truncation
        if metadata is not None:
            cfg["metadata"] = metadata
        self.broker_config, self.cluster_config, self.topic_defaults = split_config(cfg, brokers=brokers)
        if self.cluster_config.truncation not in TRUNCATION_MODES:
            raise ClusterError(f"truncation must be one of {', '.join(TRUNCATION_MODES)}")
        self.seed = seed
        self.shape: dict[str, object] | None = None   # how engine.persistence created it (saved with it)
        self.data_dir = os.path.abspath(data_dir)
        os.makedirs(self.data_dir, exist_ok=True)
        self.scheduler = Scheduler()
        self.bus = ev.EventBus(lambda: self.scheduler.now_ms, lambda: self.scheduler.steps)
        if on_event is not None:
            self.bus.subscribe(on_event)
        self.random = RandomTree(seed)
        self.network = Network(self.scheduler, self.random.fork("network"), self.bus,
                               min_delay_ms=self.cluster_config.network_min_delay_ms,
                               max_delay_ms=self.cluster_config.network_max_delay_ms,
                               loss_rate=self.cluster_config.network_loss_rate)
        self.world = World(self.scheduler, self.network, self.bus, self.random, self.data_dir,
                           fsync=self.cluster_config.fsync, epoch_ms=EPOCH_MS)
        self.store = MetadataStore(self.scheduler)
        self.kraft = self.cluster_config.metadata == "kraft"
        if self.kraft:
            try:
                voters = quorum_voters(self.cluster_config, brokers)
            except InvalidConfigError as error:
                raise ClusterError(str(error), Errors.INVALID_CONFIG) from None
            self.cluster_config = replace(self.cluster_config, voters=voters)
        # What the facade reads: ZooKeeper's znodes, or in KRaft the active controller's committed image.
        self.metadata: MetadataReader = _ActiveControllerImage(self) if self.kraft else ZkMetadata(self.store)
        self.topics = Topics(self.metadata)
        self._deleted_names: dict[str, int] = {}   # topic name -> times deleted (a new id when it comes back)
        self.producers: dict[str, Producer] = {}
        self.consumers: dict[str, Consumer] = {}
        self.apps: dict[str, PollLoop] = {}      # by consumer name: the application last driving that consumer
        self.sinks: dict[str, ListSink] = {}     # by name: where consumer applications write (consumer_app.py)
        self._session_expiry: dict[int, Scheduled] = {}
        self.brokers: dict[int, Broker] = {}
        self.simple_producer = SimpleProducer(self.world, request_timeout_ms=self.broker_config.request_timeout_ms,
                                              leader_of=self.leader_of, available_partitions=self._available_partitions)
        self.produced = self.simple_producer.produced   # Cluster.produce's sends (produced_log.py)
        for broker_id in range(1, brokers + 1):   # each attaches to the network and watches the store
            self.brokers[broker_id] = Broker(self.world, broker_id, self.store, self.broker_config,
                                             self.cluster_config, self.topic_defaults)
        # KRaft with dedicated controllers (process.roles=controller): nodes of their own, started first.
        self.controller_nodes: dict[int, ControllerServer] = {}
        if self.kraft and self.cluster_config.controller_mode == "dedicated":
            for node_id in self.cluster_config.voters:
                self.controller_nodes[node_id] = ControllerServer(self.world, node_id, self.cluster_config.voters,
                                                                  self.cluster_config.quorum, self.broker_config)
        if restore is not None:
            restore(self)
        for server in self.controller_nodes.values():
            server.start()
        for broker in self.brokers.values():
            broker.start()
        self.run_until_idle()

    @property
    def _assign_rng(self):
        """Replica placement's seeded stream, shared with the brokers' auto-created topics."""
        return self.world.stream("assignment")

    # -- time -------------------------------------------------------------------------------
    @property
    def now_ms(self) -> int:
        return self.scheduler.now_ms

    def record_clock(self) -> int:
        """Wall-clock time as records and retention see it: virtual, from EPOCH_MS."""
        return EPOCH_MS + self.scheduler.now_ms

    def step(self) -> list[ev.Event]:
        """Run exactly one scheduled action; return the events it caused."""
        self.bus.drain()  # commands' events went to subscribers already; they are not this step's
        self.scheduler.step()
        return self.bus.drain()

    def run_for(self, ms: int) -> list[ev.Event]:
        """Run every action due in the next `ms`; the clock then stands `ms` later."""
        self.bus.drain()
        self.scheduler.run(until_ms=self.scheduler.now_ms + ms)
        return self.bus.drain()

    def run_until_idle(self, max_ms: int = 600_000) -> list[ev.Event]:
        """Run until nothing is under way and every reachable replica has caught up (or max_ms)."""
        self.bus.drain()
        self.scheduler.run(until_ms=self.scheduler.now_ms + max_ms, stop=self.is_idle, advance=False)
        return self.bus.drain()

    def is_idle(self) -> bool:
        if self.scheduler.has_foreground_work() or self.controller is None:
            return False
        if self.kraft and not self._metadata_propagated():
            return False
        for key in self.all_partitions():
            state = self.metadata.partition_state(*key)   # read only: decoded once per version
            if state is None or state["leader"] < 0:
                continue
            leader = state["leader"]
            leader_part = self.brokers[leader].partitions.get(key)
            if leader_part is None or leader_part.role != "leader" or leader_part.pending:
                return False
            all_isr_reachable = True
            for replica in state["replicas"]:
                if replica == leader:
                    continue
                if not self._can_replicate(replica, leader):
                    all_isr_reachable &= replica not in leader_part.isr
                    continue
                part = self.brokers[replica].partitions.get(key)
                if part is None or part.log_end_offset != leader_part.log_end_offset \
                        or part.high_watermark != leader_part.high_watermark or replica not in leader_part.isr:
                    return False
            # With the whole ISR caught up, the HW must have caught up too (unless it is frozen
            # because the ISR is below min.insync.replicas, or a member cannot fetch).
            if all_isr_reachable and len(leader_part.isr) >= leader_part.min_insync_replicas \
                    and leader_part.high_watermark != leader_part.log_end_offset:
                return False
        return True

    def _can_replicate(self, follower: int, leader: int) -> bool:
        broker = self.brokers[follower]
        if self.kraft and not self._reaches_active_controller(broker):
            return False    # it cannot learn from the metadata log whom to follow
        return broker.alive and not broker.fetchers_paused and \
            not self.network.is_cut(broker.node, self.brokers[leader].node)

    def _reaches_active_controller(self, broker: Broker) -> bool:
        active = self.controller
        if active is None or broker.kraft is None:
            return True
        node = broker.kraft.voters.get(active.node_id)
        return node is None or node == broker.node or not self.network.is_cut(broker.node, node)

    # -- events -----------------------------------------------------------------------------
    def subscribe(self, callback: Callable[[ev.Event], None]) -> Callable[[], None]:
        """Call `callback(event)` for every event from now on; returns an unsubscribe function."""
        return self.bus.subscribe(callback)

    # -- brokers and the controller -------------------------------------------------------------
    # Brokers register and elect the controller themselves (Broker.start, Broker._on_controller_change);
    # these read the outcome.
    @property
    def controller(self) -> Any:
        """The controller: in ZooKeeper mode held by its broker from its election until `/controller`
        goes away; in KRaft the active QuorumController (the Raft leader's, once it has caught up)."""
        if self.kraft:
            return next((c for c in self.quorum_controllers() if c.is_active()), None)
        return next((b.controller for b in self.brokers.values() if b.controller is not None), None)

    def quorum_controllers(self) -> list[Any]:
        """KRaft: every controller node's QuorumController, by node id."""
        combined = [b.kraft.controller for _, b in sorted(self.brokers.items())
                    if b.kraft is not None and b.kraft.controller is not None]
        return combined + [s.controller for _, s in sorted(self.controller_nodes.items()) if s.controller is not None]

    def _metadata_propagated(self) -> bool:
        """KRaft: every running, registered broker has replayed the metadata the active controller committed."""
        active = self.controller
        registered = active.committed.registrations()
        for broker in self.brokers.values():
            if not broker.alive or broker.kraft is None:
                continue
            leader = broker.kraft.voters.get(active.node_id)
            if leader is not None and self.network.is_cut(broker.node, leader):
                continue
            if broker.id not in registered or broker.kraft.image.offset < active.committed.offset:
                return False      # not registered and unfenced yet, or behind the committed metadata
        return True

    def registrations(self) -> dict[int, int]:
        """Live broker id -> the incarnation it registered with (its `/brokers/ids` node); in KRaft,
        registered and unfenced brokers -> their broker epoch."""
        return self.metadata.registrations()

    @property
    def controller_epoch(self) -> int:
        return self.metadata.controller_epoch()

    def controller_id(self) -> int:
        return self.metadata.controller_id()

    # -- topics -----------------------------------------------------------------------------
    def create_topic(self, topic: str, partitions: int = 1, replication_factor: int = 1, *,
                     config: dict | None = None, replica_assignment: list[list[int]] | None = None,
                     wait: bool = True) -> dict:
        """Create a topic (kafka-topics --create). Raises ClusterError with Kafka's error name."""
        try:
            validate_topic_name(topic)
        except ValueError as error:
            raise ClusterError(str(error), Errors.INVALID_TOPIC_EXCEPTION) from None
        if topic in self.topics:
            raise ClusterError(f"Topic '{topic}' already exists.", TopicExistsError.kafka_name)
        try:
            check_collision(topic, list(self.topics))
        except ValueError as error:
            raise ClusterError(str(error), Errors.INVALID_TOPIC_EXCEPTION) from None
        merged = dict(self.topic_defaults)
        merged.update(config or {})
        try:
            check_topic_config(merged)
        except InvalidConfigError as error:
            raise ClusterError(str(error), Errors.INVALID_CONFIG) from None
        assignment = self._assignment(partitions, replication_factor, replica_assignment)
        if self.controller is None:
            self.run_until_idle()
        if self.controller is None:
            raise ClusterError("There is no controller: no broker is alive", Errors.NOT_CONTROLLER)
        # A name used again after a deletion gets a new id (Kafka's are random UUIDs); a name's first
        # use keeps the stream it always had.
        reuse = self._deleted_names.get(topic, 0)
        topic_id = zk.new_topic_id(self.random.fork(f"topic-id/{topic}" + (f"#{reuse}" if reuse else "")))
        if self.kraft:
            # CreateTopics at the active controller: its records commit, then brokers replay them.
            refused, message = self.controller.create_topic(topic, assignment, merged, topic_id)
            if refused != Errors.NONE:
                raise ClusterError(message, refused)
        else:
            # The controller hears of it at once, announces it and creates its partitions (Controller.on_topic_change).
            zk.create_topic(self.store, topic, assignment, merged, topic_id)
        if wait:
            self._wait_for_leaders(topic)
        return self.describe_topic(topic)

    def add_partitions(self, topic: str, count: int, *, wait: bool = True) -> dict:
        """Grow a topic to `count` partitions (kafka-topics --alter --partitions). Keys may then map
        to other partitions; partitions can never be removed."""
        info = self._topic(topic)
        if count <= info.partitions:
            raise ClusterError(f"Topic currently has {info.partitions} partitions, which is higher than or "
                               f"equal to the requested {count}.", Errors.INVALID_PARTITIONS)
        if self.controller is None:
            raise ClusterError("There is no controller: no broker is alive", Errors.NOT_CONTROLLER)
        live = sorted(self.registrations())
        first = self.partition_state(topic, 0)["replicas"][0]
        start_index = max(0, next((i for i, b in enumerate(live) if b >= first), 0))
        try:
            if self.kraft:
                added = place_replicas_striped(live, count - info.partitions, info.replication_factor,
                                               self._assign_rng, racks=self.metadata.broker_racks())
            else:
                added = assign_replicas(live, count - info.partitions, info.replication_factor, self._assign_rng,
                                        start_index=start_index, start_partition_id=info.partitions,
                                        racks=self.metadata.broker_racks())
        except ValueError as error:
            raise ClusterError(str(error), getattr(error, "kafka_name", Errors.INVALID_REQUEST)) from None
        if self.kraft:
            answers: list = []
            self.controller._handle_create_partitions("admin", CreatePartitionsRequest(topic, added),
                                                      lambda answer, summary=None: answers.append(answer))
            if answers and answers[0].error != Errors.NONE:
                raise ClusterError(f"Cannot add partitions to '{topic}'", answers[0].error)
        else:
            zk.add_partitions(self.store, topic, added)   # the controller creates them (Controller.on_topic_change)
        if wait:
            self._wait_for_leaders(topic, count)
        return self.describe_topic(topic)

    def _assignment(self, partitions: int, replication_factor: int,
                    replica_assignment: list[list[int]] | None) -> list[list[int]]:
        try:
            if replica_assignment is not None:
                return check_replica_assignment(replica_assignment, self.brokers)
            if self.kraft:
                # KRaft's controller places replicas with its StripedReplicaPlacer over the unfenced
                # brokers (the lab computes it here, from the controller's committed image).
                return place_replicas_striped(sorted(self.registrations()), partitions, replication_factor,
                                              self._assign_rng, racks=self.metadata.broker_racks())
            return assign_replicas(sorted(self.registrations()), partitions, replication_factor, self._assign_rng,
                                   racks=self.metadata.broker_racks())
        except ValueError as error:
            raise ClusterError(str(error), getattr(error, "kafka_name", Errors.INVALID_REQUEST)) from None

    def _wait_for_leaders(self, topic: str, partitions: int = 1) -> None:
        """Run until the topic's first `partitions` (at least) have committed and their leaders lead
        (in KRaft the records commit, then brokers replay them, a few network trips later)."""
        def ready() -> bool:
            info = self.topics.get(topic)
            if info is None or info.partitions < partitions:
                return False
            for p in range(info.partitions):
                state = self.metadata.partition_state(topic, p)
                if state is None or state["leader"] < 0:
                    continue
                part = self.brokers[state["leader"]].partitions.get((topic, p))
                if part is None or part.role != "leader" or part.leader_epoch != state["leader_epoch"]:
                    return False
            return True
        # (The loop this replaces read `(next_time() or end + 1) <= end`, which took an action due at
        # time 0 for one past the deadline; none is ever pending here, as the brokers' start-up runs first.)
        self.scheduler.run(until_ms=self.now_ms + 60_000, stop=ready, advance=False)

    # -- deletion, reassignment, preferred leader election (ZooKeeper mode: /admin nodes) --------
    def delete_topic(self, topic: str, *, wait: bool = True) -> dict:
        """kafka-topics --delete: mark the topic for deletion; the controller stops and deletes every
        replica, then removes the topic (engine/replication/topic_deletion.py). With `wait`, runs
        until it is gone or waits for a replica on a broker that is down. Internal topics, and every
        topic with delete.topic.enable=false, are refused with nothing changed.

        KRaft: DeleteTopics at the active controller writes one RemoveTopicRecord; the topic is gone
        once it commits, and each broker deletes its replicas when it replays it (a broker that is
        down does so when it comes back)."""
        self._topic(topic)
        if is_internal(topic):
            raise ClusterError(f"Topic {topic} is a kafka internal topic and is not allowed to be marked for "
                               f"deletion.", Errors.INVALID_TOPIC_EXCEPTION, "topic")
        if not self.broker_config.delete_topic_enable:
            raise ClusterError(f"Topic deletion is disabled (delete.topic.enable=false): {topic} is kept",
                               Errors.TOPIC_DELETION_DISABLED, "topic")
        if self.controller is None:
            raise ClusterError("There is no controller: no broker is alive", Errors.NOT_CONTROLLER)
        if self.kraft:
            answers: list = []
            self.controller._handle_delete_topics("admin", DeleteTopicsRequest(topic),
                                                  lambda answer, summary=None: answers.append(answer))
            self._deleted_names[topic] = self._deleted_names.get(topic, 0) + 1
            if wait:
                self.scheduler.run(until_ms=self.now_ms + 60_000, advance=False,
                                   stop=lambda: topic not in self.topics and self._metadata_propagated())
            return self.deletion_status(topic)
        zk.mark_topic_for_deletion(self.store, topic)
        self._deleted_names[topic] = self._deleted_names.get(topic, 0) + 1
        if wait:
            self.scheduler.run(until_ms=self.now_ms + 60_000, advance=False,
                               stop=lambda: not zk.topic_exists(self.store, topic)
                               or not self.scheduler.has_foreground_work())
        return self.deletion_status(topic)

    def deletion_status(self, topic: str) -> dict:
        """Whether `topic` is deleted, or which down brokers its deletion waits for (KRaft: none)."""
        if self.kraft:
            return {"topic": topic, "deleted": topic not in self.topics, "waiting_for_brokers": []}
        if not zk.topic_exists(self.store, topic):
            return {"topic": topic, "deleted": True, "waiting_for_brokers": []}
        live = self.registrations()
        replicas = {b for r in zk.assignment(self.store, topic) for b in r}
        return {"topic": topic, "deleted": False, "marked_for_deletion": zk.is_marked_for_deletion(self.store, topic),
                "waiting_for_brokers": sorted(replicas - set(live))}

    def reassign_partitions(self, plan: str | dict, *, wait: bool = False) -> dict:
        """kafka-reassign-partitions --execute: check the plan (JSON text or object), then ask the
        controller to move the partitions (KIP-455's steps, Controller.on_reassignment_requested).
        Returns the current assignment (the tool's rollback JSON) and the partitions started. A bad
        plan raises ClusterError naming the field, with nothing changed.

        KRaft: AlterPartitionReassignments at the active controller: one PartitionChangeRecord per
        partition (QuorumController.alter_partition_reassignments); the move completes in the
        AlterPartition that brings every target replica into the ISR."""
        if self.controller is None:
            raise ClusterError("There is no controller: no broker is alive", Errors.NOT_CONTROLLER)
        entries = self._reassignment_plan(plan, live_only=True)
        if self.kraft:
            if self.controller.ongoing_reassignments():
                raise ClusterError("There is an existing assignment running.", Errors.REASSIGNMENT_IN_PROGRESS)
            current = {"version": 1, "partitions": [
                {"topic": e.topic, "partition": e.partition,
                 "replicas": self.partition_state(e.topic, e.partition)["replicas"],
                 "log_dirs": ["any"] * len(self.partition_state(e.topic, e.partition)["replicas"])} for e in entries]}
            self.controller.alter_partition_reassignments([(e.topic, e.partition, e.replicas) for e in entries])
            if wait:
                self.run_until_idle()
            else:
                self.scheduler.run(until_ms=self.now_ms + 60_000, advance=False,
                                   stop=lambda: not self.scheduler.has_foreground_work())
            return {"current": current, "started": [f"{e.topic}-{e.partition}" for e in entries]}
        if self.store.exists(zk.REASSIGN_PARTITIONS_PATH) or zk.ongoing_reassignments(self.store):
            raise ClusterError("There is an existing assignment running.", Errors.REASSIGNMENT_IN_PROGRESS)
        current = {"version": 1, "partitions": [
            {"topic": e.topic, "partition": e.partition, "replicas": self.partition_state(e.topic, e.partition)[
                "replicas"], "log_dirs": ["any"] * len(self.partition_state(e.topic, e.partition)["replicas"])}
            for e in entries]}
        try:
            zk.request_reassignment(self.store, [(e.topic, e.partition, e.replicas) for e in entries])
        except NodeExistsError:
            raise ClusterError("There is an existing assignment running.", Errors.REASSIGNMENT_IN_PROGRESS) from None
        keys = [(e.topic, e.partition) for e in entries]

        def started() -> bool:   # the controller took every entry up (or finished it already)
            requested = {(t, p) for t, p, _ in zk.requested_reassignments(self.store)}
            moving = self.controller.reassigning if self.controller is not None else set()
            return all(k in moving or k not in requested for k in keys)
        self.scheduler.run(until_ms=self.now_ms + 60_000, advance=False,
                           stop=lambda: started() or not self.scheduler.has_foreground_work())
        if wait:
            self.run_until_idle()
        return {"current": current, "started": [f"{e.topic}-{e.partition}" for e in entries]}

    def verify_reassignment(self, plan: str | dict) -> list[dict]:
        """kafka-reassign-partitions --verify: per partition of the plan, "completed", "in progress" or
        "different" (no move under way, but the replicas are not the plan's), with the tool's line."""
        entries = self._reassignment_plan(plan, live_only=False)
        current = {(e.topic, e.partition): list(self.partition_state(e.topic, e.partition)["replicas"])
                   for e in entries}
        ongoing = self.controller.ongoing_reassignments() if self.kraft and self.controller is not None \
            else set(zk.ongoing_reassignments(self.store))
        return [{"topic": t, "partition": p, "state": state, "message": line}
                for t, p, state, line in verify_reassignment(entries, current, ongoing)]

    def _reassignment_plan(self, plan: str | dict, *, live_only: bool) -> list[PartitionReassignment]:
        counts = {t: info.partitions for t, info in self.topics.items() if not zk.is_marked_for_deletion(self.store, t)}
        try:
            return parse_reassignment_plan(plan, counts, self.brokers,
                                           self.registrations() if live_only else self.brokers)
        except ReassignmentPlanError as error:
            raise ClusterError(str(error), error.error, error.field) from None

    def elect_leaders(self, election_type: str = "preferred", partitions: list[tuple[str, int]] | None = None, *,
                      wait: bool = True) -> dict[str, str]:
        """kafka-leader-election --election-type preferred (--all-topic-partitions: `partitions` None):
        per partition, Kafka's answer — NONE (the preferred replica leads now), ELECTION_NOT_NEEDED,
        PREFERRED_LEADER_NOT_AVAILABLE (not alive or not in the ISR). For all partitions, those that
        need no election are left out, as the tool does. KRaft: ElectLeaders at the active controller,
        one PartitionChangeRecord per partition that moves."""
        if election_type != "preferred":
            raise ClusterError(f"election_type must be 'preferred' (the lab has no unclean election on request), "
                               f"not {election_type!r}", Errors.INVALID_REQUEST, "election_type")
        if self.controller is None:
            raise ClusterError("There is no controller: no broker is alive", Errors.NOT_CONTROLLER)
        every = partitions is None
        wanted = [(t, p) for t, p in self.all_partitions() if not zk.is_marked_for_deletion(self.store, t)] \
            if partitions is None else list(dict.fromkeys((t, p) for t, p in partitions))
        for index, (topic, partition) in enumerate(wanted):
            info = self.topics.get(topic)
            if info is None or zk.is_marked_for_deletion(self.store, topic) or not 0 <= partition < info.partitions:
                raise ClusterError(f"partitions[{index}]: {topic}-{partition} does not exist",
                                   Errors.UNKNOWN_TOPIC_OR_PARTITION, f"partitions[{index}]")
        live = set(self.registrations())
        results = {}
        for topic, partition in wanted:
            state = self.partition_state(topic, partition)
            error = preferred_election_error(state["replicas"], state["leader"], state["isr"], live)
            if not (every and error == Errors.ELECTION_NOT_NEEDED):
                results[f"{topic}-{partition}"] = error.value
        eligible = [(t, p) for t, p in wanted if results.get(f"{t}-{p}") == Errors.NONE]
        if eligible and self.kraft:
            self.controller.elect_preferred_leaders(eligible)
            if wait:
                self.scheduler.run(until_ms=self.now_ms + 60_000, advance=False,
                                   stop=lambda: all(self.leader_of(t, p) == self.partition_state(t, p)["replicas"][0]
                                                    for t, p in eligible) and self._metadata_propagated())
        elif eligible:
            try:
                zk.request_preferred_election(self.store, eligible)
            except NodeExistsError:
                raise ClusterError("A preferred replica election is already under way",
                                   Errors.INVALID_REQUEST) from None
            if wait:
                self.scheduler.run(until_ms=self.now_ms + 60_000, advance=False,
                                   stop=lambda: not self.store.exists(zk.PREFERRED_REPLICA_ELECTION_PATH))
        return results

    def ensure_offsets_topic(self) -> bool:
        """Create `__consumer_offsets` if it does not exist yet, as a broker does on the first
        FindCoordinator: `offsets.topic.num.partitions` partitions, replication factor
        min(`offsets.topic.replication.factor`, live brokers), compacted, 100 MiB segments.
        Returns True when the topic already existed (False: just created, or no controller yet).
        Safe to call from inside a request handler: it never runs the scheduler."""
        creator = next((b for b in self.brokers.values() if b.alive), None)
        if creator is None:
            return False
        return ensure_offsets_topic(self.world, self.metadata, self.broker_config, self.topic_defaults,
                                    creator.create_topic, striped=self.kraft)

    def describe_topic(self, topic: str) -> dict:
        info = self._topic(topic)
        parts = []
        for p in range(info.partitions):
            state = self.partition_state(topic, p)
            parts.append({"partition": p, "leader": state["leader"], "leader_epoch": state["leader_epoch"],
                          "replicas": state["replicas"], "isr": state["isr"]})
        return {"topic": topic, "partitions": parts, "replication_factor": info.replication_factor,
                "config": dict(info.config)}

    def list_topics(self) -> list[str]:
        return sorted(self.topics)

    def _topic(self, topic: str) -> TopicInfo:
        info = self.topics.get(topic)
        if info is None:
            raise ClusterError(f"Topic '{topic}' does not exist", UnknownTopicError.kafka_name)
        return info

    def all_partitions(self) -> list[tuple[str, int]]:
        """Every partition of every topic, topics in the order they were created."""
        return [(t, p) for t, info in self.topics.items() for p in range(info.partitions)]

    def partition_state(self, topic: str, partition: int) -> dict:
        self._topic(topic)
        state = self.metadata.partition_state(topic, partition)
        if state is None:
            raise ClusterError(f"Partition {partition} of topic '{topic}' does not exist",
                               Errors.UNKNOWN_TOPIC_OR_PARTITION)
        return state

    def leader_of(self, topic: str, partition: int) -> int:
        return self.partition_state(topic, partition)["leader"]

    # -- produce and read -------------------------------------------------------------------
    def produce(self, topic: str, key: bytes | str | None, value: bytes | str | None, *,
                partition: int | None = None, acks: int | str = -1, tag: object = None,
                headers: list | None = None, partitioner: str = STICKY) -> Produced:
        """Send one record as a producer would (one request); the answer comes as an event.

        Without a partition, a key picks one by murmur2 and a record with neither goes to the
        null-key `partitioner`: "sticky", Kafka's default (KIP-794), or "round-robin" (before
        Kafka 2.4); engine/clients/lab_client_partitioner.py says how sticky works for a client
        that sends every record alone."""
        info = self._topic(topic)
        acks = _acks(acks)
        if partition is None and partitioner not in NULL_KEY_PARTITIONERS:
            raise ClusterError(f"partitioner must be one of {', '.join(NULL_KEY_PARTITIONERS)}, not {partitioner!r}",
                               Errors.INVALID_REQUEST)
        self._check_partition(info, partition)
        return self.simple_producer.produce(topic, info.partitions, _utf8(key), _utf8(value), partition=partition,
                                            acks=acks, tag=tag, headers=headers, partitioner=partitioner)

    def produce_batch(self, topic: str, partition: int, records: list[tuple], *, acks: int | str = -1,
                      tag: object = None) -> Produced:
        """Send several records as one batch in one request (what a producer's accumulator does).
        The Produced entry stands for the whole batch: its offset is the batch's first offset."""
        self._check_partition(self._topic(topic), partition)
        acks = _acks(acks)
        return self.simple_producer.produce_batch(topic, partition, _utf8_pairs(records), acks=acks, tag=tag)

    def _check_partition(self, info: TopicInfo, partition: int | None) -> None:
        if partition is not None and not 0 <= partition < info.partitions:
            raise ClusterError(f"Partition {partition} of topic '{info.name}' does not exist",
                               Errors.UNKNOWN_TOPIC_OR_PARTITION)

    def _available_partitions(self, topic: str, partitions: int) -> list[int]:
        """Partitions with a leader, in partition order (Cluster.availablePartitionsForTopic)."""
        return [p for p in range(partitions) if self.partition_state(topic, p)["leader"] >= 0]

    def read(self, topic: str, partition: int, offset: int = 0, max_records: int = 1000) -> list[rb.Record]:
        """Committed records (below the leader's HW), as a consumer sees them."""
        self._topic(topic)
        leader = self.leader_of(topic, partition)
        if leader < 0:
            raise ClusterError(f"Partition {topic}-{partition} is offline: no leader",
                               Errors.LEADER_NOT_AVAILABLE)
        part = self.brokers[leader].partitions.get((topic, partition))
        if part is None or part.role != "leader":
            raise ClusterError(f"Broker {leader} is not yet leading {topic}-{partition}",
                               Errors.NOT_LEADER_OR_FOLLOWER)
        offset = max(offset, part.log.log_start_offset)
        return part.committed_records(offset, max_records)

    # -- clients ----------------------------------------------------------------------------
    def producer(self, name: str = "producer", config: dict | None = None) -> Producer:
        """The producer called `name` (a client node "producer-<name>"), created with `config`
        on first use. Its records are sent by its accumulator and sender, as Kafka's are. Its
        bootstrap.servers are the cluster's brokers; it learns the rest from metadata answers."""
        if name not in self.producers:
            self.producers[name] = Producer(self.world, name, dict(config or {}), bootstrap=sorted(self.brokers))
        return self.producers[name]

    def consumer(self, name: str, config: dict | None = None) -> Consumer:
        """The consumer called `name` (a client node "consumer-<name>"), created on first use, with
        the cluster's brokers as its bootstrap.servers; an application driving it is kept in `apps`."""
        if name not in self.consumers:
            self.consumers[name] = Consumer(self.world, name, dict(config or {}), bootstrap=sorted(self.brokers),
                                            apps=self.apps)
        return self.consumers[name]

    # -- faults -----------------------------------------------------------------------------
    def kill_broker(self, broker_id: int, mode: str = "process") -> list[ev.Event]:
        broker = self._broker(broker_id)
        if not broker.alive:
            raise ClusterError(f"Broker {broker_id} is already down", Errors.BROKER_NOT_AVAILABLE)
        if CRASH_MODES.get(mode, mode) not in ("process", "power"):
            raise ClusterError(f"A broker crashes by 'process' (written data survives) or 'power' "
                               f"(unflushed data is lost), not {mode!r}", Errors.INVALID_REQUEST)
        broker.crash(mode)
        if self.kraft:
            return self.bus.drain()     # no ZooKeeper session: the controller fences it when its heartbeats stop
        session = broker.session
        self._session_expiry[broker_id] = self.scheduler.schedule(
            self.broker_config.zookeeper_session_timeout_ms, lambda: self._expire_session(broker_id, session),
            label=f"session of broker {broker_id} expires")
        return self.bus.drain()

    def _expire_session(self, broker_id: int, session: int | None) -> None:
        self._session_expiry.pop(broker_id, None)
        if session is not None and self.store.expire_session(session):
            self.bus.publish(ev.BrokerSessionExpired(broker=broker_id))

    def restart_broker(self, broker_id: int) -> list[ev.Event]:
        broker = self._broker(broker_id)
        if broker.alive:
            raise ClusterError(f"Broker {broker_id} is already running", Errors.INVALID_REQUEST)
        broker.start(restarted=True)
        # Its new session replaced the old one: the old one's expiry (kill_broker's timer) is moot.
        self.scheduler.cancel(self._session_expiry.pop(broker_id, None))
        return self.bus.drain()

    def kill_controller(self, mode: str = "process") -> list[ev.Event]:
        """Crash the controller: ZooKeeper mode's controller broker, or KRaft's active controller (its
        broker in combined mode, its controller node when dedicated)."""
        controller = self.controller_id()
        if self.kraft:
            active = self.controller
            controller = active.node_id if active is not None else -1
        if controller < 0:
            raise ClusterError("There is no controller to kill", Errors.NOT_CONTROLLER)
        if controller in self.controller_nodes:
            return self.kill_controller_node(controller)
        return self.kill_broker(controller, mode)

    def kill_controller_node(self, node_id: int) -> list[ev.Event]:
        """Crash a dedicated KRaft controller node (its metadata log survives on its disk)."""
        server = self._controller_node(node_id)
        if not server.alive:
            raise ClusterError(f"Controller {node_id} is already down", Errors.BROKER_NOT_AVAILABLE)
        server.crash()
        return self.bus.drain()

    def restart_controller_node(self, node_id: int) -> list[ev.Event]:
        server = self._controller_node(node_id)
        if server.alive:
            raise ClusterError(f"Controller {node_id} is already running", Errors.INVALID_REQUEST)
        server.start(restarted=True)
        return self.bus.drain()

    def _controller_node(self, node_id: int) -> ControllerServer:
        server = self.controller_nodes.get(node_id)
        if server is None:
            raise ClusterError(f"There is no controller node {node_id} (controller nodes: "
                               f"{sorted(self.controller_nodes) or 'none: this cluster runs none of its own'})",
                               Errors.BROKER_NOT_AVAILABLE)
        return server

    def pause_fetcher(self, broker_id: int) -> list[ev.Event]:
        self._live_broker(broker_id).pause_fetchers()
        self.bus.publish(ev.FaultInjected(fault="pause_fetcher", brokers=[broker_id]))
        return self.bus.drain()

    def resume_fetcher(self, broker_id: int) -> list[ev.Event]:
        self.bus.publish(ev.FaultInjected(fault="resume_fetcher", brokers=[broker_id]))
        self._live_broker(broker_id).resume_fetchers()
        return self.bus.drain()

    def partition_network(self, a: int | str, b: int | str) -> list[ev.Event]:
        """Cut the link between two nodes: broker ids, or client names ("producer-p1", "consumer-c1")."""
        self.network.cut(self._node(a), self._node(b))
        self.bus.publish(ev.FaultInjected(fault="partition_network", brokers=_ids(a, b),
                                          detail=f"{self._node(a)} x {self._node(b)}"))
        return self.bus.drain()

    def heal_network(self, a: int | str, b: int | str) -> list[ev.Event]:
        self.network.heal(self._node(a), self._node(b))
        self.bus.publish(ev.FaultInjected(fault="heal_network", brokers=_ids(a, b),
                                          detail=f"{self._node(a)} - {self._node(b)}"))
        for node in (a, b):
            broker = self.brokers.get(node) if isinstance(node, int) else None
            if broker is not None and broker.alive:
                for fetcher in broker.fetchers.values():
                    fetcher.maybe_send()
        return self.bus.drain()

    def _node(self, node: int | str) -> str:
        if isinstance(node, str) and not node.isdigit():
            if not self.network.has_node(node):
                raise ClusterError(f"There is no node called {node!r}", Errors.INVALID_REQUEST)
            return node
        if int(node) in self.controller_nodes:
            return self.controller_nodes[int(node)].node
        return self._broker(int(node)).node

    def slow_broker(self, broker_id: int, delay_ms: int) -> list[ev.Event]:
        self.network.slow(self._broker(broker_id).node, delay_ms)
        self.bus.publish(ev.FaultInjected(fault="slow_broker", brokers=[broker_id], detail=f"+{delay_ms} ms"))
        return self.bus.drain()

    def flush_broker(self, broker_id: int) -> list[ev.Event]:
        self._live_broker(broker_id).flush_logs()
        return self.bus.drain()

    def _broker(self, broker_id: int) -> Broker:
        broker = self.brokers.get(broker_id)
        if broker is None:
            raise ClusterError(f"There is no broker {broker_id} (brokers: {sorted(self.brokers)})",
                               Errors.BROKER_NOT_AVAILABLE)
        return broker

    def _live_broker(self, broker_id: int) -> Broker:
        broker = self._broker(broker_id)
        if not broker.alive:
            raise ClusterError(f"Broker {broker_id} is down", Errors.BROKER_NOT_AVAILABLE)
        return broker

    def close(self) -> None:
        """Shut every live broker down cleanly (checkpoints written, logs flushed)."""
        for broker in self.brokers.values():
            broker.shutdown()
        for server in self.controller_nodes.values():
            server.shutdown()


class _ActiveControllerImage:
    """KRaft: the metadata as the facade reads it, the committed image of the active controller (or,
    with none active, of the controller that has committed the most): what the cluster has agreed on."""

    def __init__(self, cluster: Cluster) -> None:
        self._cluster = cluster
        self._active: Any = None      # the controller found active last time: asked first (every produce reads)

    def _image(self) -> Any:
        if self._active is not None and self._active.is_active():
            return self._active.committed
        controllers = self._cluster.quorum_controllers()
        if not controllers:
            return MetadataImage()
        active = next((c for c in controllers if c.is_active()), None)
        self._active = active
        if active is None:
            active = max(controllers, key=lambda c: (c.committed.offset, -c.node_id))
        return active.committed

    @property
    def version(self) -> int:
        image = self._image()
        return image.changes * 1000 + image.leader[1] % 1000

    def __getattr__(self, name: str) -> Any:
        # Only the reader's own names go to the image: a private name not set yet (pickle asks for
        # `__setstate__` and the like before the instance has its attributes) is simply missing.
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._image(), name)


def _ids(*nodes: int | str) -> list[int]:
    return [int(n) for n in nodes if isinstance(n, int) or str(n).isdigit()]


def _acks(acks: int | str) -> int:
    if acks in ("all", "-1", -1):
        return -1
    if acks in (0, 1, "0", "1"):
        return int(acks)
    raise ClusterError(f"acks must be 0, 1 or all (-1), not {acks!r}", Errors.INVALID_REQUIRED_ACKS)


def _utf8(data: bytes | str | None) -> bytes | None:
    return data.encode("utf-8") if isinstance(data, str) else data


RAW_TYPES = frozenset({bytes, type(None)})


def _utf8_pairs(records: list[tuple]) -> list[tuple]:
    """(key, value) pairs with text as UTF-8, as a StringSerializer sends it. A list whose keys and
    values all are bytes or None already is given back as it is — checked by map() and set(), not
    by a Python step per record: produce_batch carries a bench's 300,000 records."""
    if isinstance(records, list) and set(map(len, records)) <= {2} \
            and set(map(type, chain.from_iterable(records))) <= RAW_TYPES:
        return records
    return [(_utf8(k), _utf8(v)) for k, v in records]
