"""A broker: its data dir, its replicas, the requests it answers, its timers, its controller role.

One process on the simulated network (a `Node` of engine/node.py: its incarnation, timers,
requests and answers), which knows the rest of the cluster only through that network and the
metadata store (engine/metadata/zk.py) — never through the `Cluster` facade. In Kafka's terms it is
KafkaServer (start-up, registration in ZooKeeper, the controller election), KafkaApis (the request
table) and ReplicaManager (produce, fetch, delayed fetches, LeaderAndIsr) in one class.

Data dir layout (one per broker), as Kafka's log dir:
    broker-1/t-0/00000000000000000000.log …     one directory per replica
    broker-1/t-0/leader-epoch-checkpoint
    broker-1/replication-offset-checkpoint        HWs, written every 5 s
    broker-1/recovery-point-offset-checkpoint     recovery points, written every 60 s
    broker-1/log-start-offset-checkpoint
    broker-1/.kafka_cleanshutdown                 present only after a clean shutdown

On start it registers (`/brokers/ids/<id>`, KafkaZkClient.registerBroker) and runs for controller
after a seeded 1-5 ms; every broker runs again when `/controller` goes away (KafkaController's
ControllerChange handler). The winner holds a `Controller` (engine/replication/controller.py)
until `/controller` goes: then it resigns. The controller epoch a broker has seen is its own
(`controller_epoch_seen`, LeaderAndIsr requests of an older controller are refused).

The broker answers Produce, Fetch (from followers and consumers), ListOffsets and
OffsetsForLeaderEpoch as a leader, Metadata, FindCoordinator and InitProducerId as any broker,
LeaderAndIsr from the controller, and the group requests through its group coordinator — each
broker builds its own table of handlers (Kafka's KafkaApis.handle), from its own parts: nothing
registers by being imported. A request it has no handler for gets INVALID_REQUEST (Kafka's
SocketServer refuses an API the broker does not enable with InvalidRequestException).

A crash ends the incarnation: every timer and callback of the old incarnation is ignored from
then on. A restart recovers each log from its recovery point (unless the last shutdown was clean)
and reads its HWs from the checkpoint; its group coordinator and producer-id block start afresh.
"""
from __future__ import annotations

import functools
import os
import random
import re
import shutil
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine import events as ev
from engine.broker import list_offsets
from engine.broker.auto_topic_creation import ensure_offsets_topic
from engine.broker.producer_ids import ProducerIdManager
from engine.broker.replica_selector import ReplicaView, preferred_read_replica
from engine.common.errors import Errors
from engine.common.topics import is_internal
from engine.groups.coordinator import GroupCoordinator, request_handlers, response_summary
from engine.groups.coordinator_partition import coordinator_partition
from engine.groups.offsets_topic import OFFSETS_TOPIC
from engine.groups.protocol import FindCoordinatorRequest, FindCoordinatorResponse, ListOffsetsRequest
from engine.metadata import zk
from engine.metadata.store import MetadataStore
from engine.metadata.view import MetadataReader, ZkMetadata
from engine.node import Node, World
from engine.protocol import (
    EpochEndOffset,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
    InitProducerIdRequest,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    MetadataRequest,
    MetadataResponse,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
    PartitionMetadata,
    PartitionState,
    ProducePartitionResponse,
    ProduceRequest,
    ProduceResponse,
    RequestEnvelope,
    StopReplicaRequest,
    StopReplicaResponse,
    TopicMetadata,
)
from engine.replication.controller import Controller
from engine.replication.fetcher import ReplicaFetcher
from engine.replication.partition import Partition
from engine.storage import checkpoints, log_events
from engine.storage.cleaner import LogCleanerManager, has_cleanable_candidate
from engine.storage.leader_epoch_cache import LeaderEpochCache
from engine.storage.log import Log

PARTITION_DIR = re.compile(r"^(.+)-(\d+)$")
# A deleted replica's directory, renamed until it is removed (LogManager.asyncDelete, UnifiedLog.logDeleteDirName).
DELETED_DIR = re.compile(r"^(.+)-(\d+)\.([0-9a-f]{32})-delete$")
DELETED_DIR_STREAM = "log-dir-delete"
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
HW_CHECKPOINT = "replication-offset-checkpoint"
RECOVERY_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_CHECKPOINT = "log-start-offset-checkpoint"
CRASH_MODES = {"power_loss": "power", "power-loss": "power", "process_crash": "process", "process-crash": "process"}
# The world's one stream for the brokers' controller-election delays (World.stream).
CONTROLLER_ELECTION_STREAM = "controller-election"


# A request handler: (the sender's node, the request, respond(body, summary=None, *, foreground=True)).
RequestHandler = Callable[[str, Any, Callable[..., None]], None]


@dataclass(slots=True)
class UnsupportedRequestResponse:
    """The answer to a request of a type this broker has no handler for."""
    error: str
    request: str


@dataclass(slots=True)
class DelayedFetch:
    src: str
    request: FetchRequest
    respond: Callable[[object], None]
    timer: object = None


class Broker:
    def __init__(self, world: World, broker_id: int, store: MetadataStore, config: Any, cluster_config: Any,
                 topic_defaults: dict | None = None) -> None:
        """`config`: the broker's settings (engine.config.BrokerConfig, Kafka's names); `cluster_config`:
        how the lab runs it (ClusterConfig: truncation mode, fsync); `topic_defaults`: its defaults for
        topic configs (Kafka's log.* broker settings), for the topics it creates itself."""
        self.world = world
        self.id = broker_id
        self.node = f"broker-{broker_id}"
        self.store = store
        self.config = config
        self.cluster_config = cluster_config
        self.topic_defaults = dict(topic_defaults or {})
        # Its broker.rack (None: none), given per broker in the cluster's config (ClusterConfig.broker_racks).
        self.rack: str | None = cluster_config.rack_of(broker_id)
        self.data_dir = os.path.join(world.data_dir, self.node)
        self._scheduler = world.scheduler
        # Its process on the network: down until start(), a new incarnation at each start.
        self.process = Node(world, self.node, on_request=self._on_request, alive=False, incarnation=0)
        self.session: int | None = None       # its ZooKeeper session
        self.controller: Controller | None = None
        # The newest controller epoch this broker has obeyed (ReplicaManager.controllerEpoch, checked
        # by becomeLeaderOrFollower). In memory, as Kafka's: a restart starts again at 0. (The lab
        # used to keep it across restarts in the facade; no scenario changes either way.)
        self.controller_epoch_seen = 0
        self.partitions: dict[tuple[str, int], Partition] = {}
        self.fetchers: dict[int, ReplicaFetcher] = {}
        self.fetchers_paused = False
        self._delayed_fetches: list[DelayedFetch] = []
        # What is physically on disk, fsynced, per replica: the simulation's knowledge of the disk,
        # which outlives an incarnation (a restarted broker's recovery point may be older).
        self.durable_offsets: dict[tuple[str, int], int] = {}
        # While the broker is down: what each of its replicas holds on disk and knew last (the log
        # outlives the process; a view must not show a down replica as empty). Set by crash().
        self.offline_replicas: dict[tuple[str, int], dict] = {}
        # Virtual time each broker-level checkpoint file was last written (by this Broker object:
        # the files, like the disk, outlive an incarnation). Absent: not written since the cluster opened.
        self.checkpoint_written_ms: dict[str, int] = {}
        # Its parts of the current incarnation, built again at each start (a restart forgets them).
        self.groups = GroupCoordinator(self)
        self.producer_ids = ProducerIdManager(self)
        # The log cleaner of the current incarnation (engine/storage/cleaner.py), and whether its
        # timer runs yet: it is armed once a compacted log has an inactive segment (_maybe_arm_cleaner).
        self.cleaner: LogCleanerManager | None = None
        self._cleaner_armed = False
        # KRaft mode (cluster_config.metadata): its metadata log, image, registration and, in combined
        # mode, its controller (engine/broker/kraft_metadata.py); ZooKeeper mode: the store's znodes.
        self.kraft: Any = None
        self.metadata: MetadataReader = ZkMetadata(store)
        if getattr(cluster_config, "metadata", "zookeeper") == "kraft":
            from engine.broker.kraft_metadata import KRaftBrokerMetadata
            voters = cluster_config.voters
            self.kraft = KRaftBrokerMetadata(self, voters, cluster_config.quorum, is_controller=broker_id in voters)
        self.handlers: dict[type, RequestHandler] = self._request_handlers()
        if self.kraft is None:
            store.watch(zk.CONTROLLER_PATH, self._on_controller_change)
            store.watch(zk.BROKER_IDS_PATH, self._on_brokers_change)
            store.watch(zk.TOPICS_PATH, self._on_topic_change, at_once=True)
            store.watch(zk.ADMIN_PATH, self._on_admin_change)
        os.makedirs(self.data_dir, exist_ok=True)

    def _request_handlers(self) -> dict[type, RequestHandler]:
        """Which of its parts answers which request (KafkaApis.handle)."""
        return {ProduceRequest: self._handle_produce,
                FetchRequest: self._handle_fetch,
                ListOffsetsRequest: self._handle_list_offsets,
                OffsetsForLeaderEpochRequest: self._handle_epoch_queries,
                LeaderAndIsrRequest: self._handle_leader_and_isr,
                StopReplicaRequest: self._handle_stop_replica,
                MetadataRequest: self._handle_metadata,
                FindCoordinatorRequest: self._handle_find_coordinator,
                InitProducerIdRequest: self.producer_ids.handle,
                **(self.kraft.request_handlers() if self.kraft is not None else {}),
                **request_handlers(self.groups)}

    # -- the world, as its parts see it (engine.node.BrokerContext) -----------------------------
    @property
    def name(self) -> str:
        return self.node

    @property
    def alive(self) -> bool:
        return self.process.alive

    @property
    def incarnation(self) -> int:
        return self.process.incarnation

    @property
    def now_ms(self) -> int:
        return self._scheduler.now_ms

    def record_time_ms(self) -> int:
        return self.world.record_time_ms()

    def publish(self, event: ev.Event) -> None:
        self.world.bus.publish(event)

    def schedule(self, delay_ms: int, action: Callable[[], None], label: str, *, foreground: bool = True) -> Any:
        """Schedule an action of this incarnation: it does nothing if the broker crashed since."""
        return self.process.schedule(delay_ms, action, label, foreground=foreground)

    def cancel(self, entry: Any) -> None:
        self._scheduler.cancel(entry)

    def rng(self, name: str) -> random.Random:
        return self.process.rng(name)

    def stream(self, name: str) -> random.Random:
        """The cluster's one seeded stream of this name (World.stream)."""
        return self.world.stream(name)

    def is_broker_registered(self, broker_id: int) -> bool:
        """ZooKeeper mode: its `/brokers/ids` node exists; KRaft: registered and unfenced in this broker's image."""
        if self.kraft is not None:
            registration = self.kraft.image.brokers.get(broker_id)   # asked on every fetch: no copy
            return registration is not None and not registration.fenced
        return self.store.exists(zk.broker_path(broker_id))

    # -- life cycle -------------------------------------------------------------------------
    def start(self, *, restarted: bool = False) -> None:
        self.process.incarnation += 1     # the next incarnation (a crash or shutdown ended the last)
        self.process.come_up()
        self.offline_replicas = {}
        self.fetchers_paused = False
        self.controller_epoch_seen = 0
        self.groups = GroupCoordinator(self)
        self.producer_ids = ProducerIdManager(self, self.kraft.allocate_producer_ids if self.kraft else None)
        self.handlers = self._request_handlers()
        clean = os.path.exists(os.path.join(self.data_dir, CLEAN_SHUTDOWN_FILE))
        if clean:
            os.remove(os.path.join(self.data_dir, CLEAN_SHUTDOWN_FILE))
        recovered = self._load_partitions(clean)
        self.publish(ev.BrokerStarted(broker=self.id, restarted=restarted, recovered_partitions=recovered))
        if self.kraft is not None:
            self.kraft.start()
            self.metadata = self.kraft.image
            self.handlers = self._request_handlers()
        else:
            self._register()
        self._start_timers()

    def _register(self) -> None:
        """Its ZooKeeper registration, an ephemeral /brokers/ids/<id> under a new session; then it
        runs for controller."""
        old = self.session
        self.session = self.store.open_session(self.id)
        registration: dict[str, Any] = {"host": self.node, "incarnation": self.incarnation}
        if self.rack is not None:
            registration["rack"] = self.rack     # broker.rack, as Kafka's BrokerInfo carries it
        zk.register_broker(self.store, self.id, registration, self.session, old)
        self._schedule_controller_attempt()

    def _load_partitions(self, clean_shutdown: bool) -> list[dict]:
        hws = checkpoints.read_offsets(os.path.join(self.data_dir, HW_CHECKPOINT))
        recovery = checkpoints.read_offsets(os.path.join(self.data_dir, RECOVERY_CHECKPOINT))
        starts = checkpoints.read_offsets(os.path.join(self.data_dir, LOG_START_CHECKPOINT))
        recovered = []
        self._schedule_deleted_dirs_removal()
        for name in sorted(os.listdir(self.data_dir)):
            match = PARTITION_DIR.match(name)
            if not match or not os.path.isdir(os.path.join(self.data_dir, name)):
                continue
            key = (match.group(1), int(match.group(2)))
            if self.kraft is None and not zk.topic_exists(self.store, key[0]):
                continue    # (KRaft: the image is empty until the metadata log replays; every log loads)
            report: list[object] = []
            partition = self._open_partition(
                key, recovery_point=recovery.get(key, 0) if clean_shutdown or key in recovery else None,
                log_start_offset=starts.get(key), high_watermark=hws.get(key, 0), on_recovery=report.append)
            for item in report:
                if isinstance(item, log_events.LogRecovered):
                    recovered.append({"topic": key[0], "partition": key[1], **_as_dict(item)})
            partition.epoch_cache.truncate_from_end(partition.log_end_offset)
        return recovered

    def _open_partition(self, key: tuple[str, int], *, recovery_point: int | None = None,
                        log_start_offset: int | None = None, high_watermark: int = 0,
                        on_recovery: Callable[[object], None] | None = None) -> Partition:
        topic, p = key
        topic_config = self.metadata.topic_config(topic)
        path = os.path.join(self.data_dir, f"{topic}-{p}")

        def listener(event: object) -> None:
            if on_recovery is not None:
                on_recovery(event)
            self._publish_log_event(topic, p, event)
        log = Log(path, zk.log_config(topic_config), recovery_point=recovery_point,
                  log_start_offset=log_start_offset, high_watermark=high_watermark,
                  clock_ms=self.world.record_time_ms, fsync=self.cluster_config.fsync, listener=listener)
        cache = LeaderEpochCache(path, fsync=self.cluster_config.fsync)
        partition = Partition(self, topic, p, log, cache,
                              min_insync_replicas=int(topic_config.get("min.insync.replicas",
                                                                       self.config.min_insync_replicas)))
        self.partitions[key] = partition
        return partition

    def _publish_log_event(self, topic: str, p: int, event: object) -> None:
        common: dict[str, Any] = {"broker": self.id, "topic": topic, "partition": p}   # the events' int/str head
        if isinstance(event, log_events.SegmentRolled):
            self.publish(ev.SegmentRolled(**common, base_offset=event.base_offset,
                                          previous_base_offset=event.previous_base_offset, reason=event.reason))
            self._maybe_arm_cleaner()
        elif isinstance(event, log_events.SegmentDeleted):
            self.publish(ev.SegmentDeleted(**common, base_offset=event.base_offset, next_offset=event.next_offset,
                                           size_in_bytes=event.size_in_bytes, reason=event.reason))
        elif isinstance(event, log_events.LogStartOffsetIncremented):
            self.publish(ev.LogStartOffsetMoved(**common, log_start_offset=event.log_start_offset,
                                                reason=event.reason))
        elif isinstance(event, log_events.LogFlushed):
            key = (topic, p)
            self.durable_offsets[key] = max(self.durable_offsets.get(key, 0), event.recovery_point)
        elif isinstance(event, log_events.LogTruncated):
            key = (topic, p)
            self.durable_offsets[key] = min(self.durable_offsets.get(key, 0), event.to_offset)
        elif isinstance(event, log_events.LogRecovered) and event.bytes_truncated:
            self.publish(ev.LogTruncated(**common, from_offset=-1, to_offset=event.log_end_offset,
                                         records_removed=0, removed=[],
                                         reason=f"log recovery cut {event.bytes_truncated} bad bytes"))

    def crash(self, mode: str) -> None:
        """Stop at once. "process": written bytes survive; "power": bytes not flushed are lost."""
        mode = CRASH_MODES.get(mode, mode)
        if mode not in ("process", "power"):
            raise ValueError(f"crash mode must be 'process' or 'power', not {mode!r}")
        self.process.go_down()
        if self.kraft is not None:
            self.kraft.stop(power_loss=(mode == "power"))
        for fetcher in self.fetchers.values():
            fetcher.stop()
        self.fetchers.clear()
        self.offline_replicas = {}
        for key, partition in self.partitions.items():
            was = partition.role
            partition.stop()
            self.groups.on_role_change(partition, was)
            self.offline_replicas[key] = _offline_replica(partition, mode, self.durable_offsets.get(key, 0))
            partition.log.close_after_crash(lose_unflushed=(mode == "power"),
                                            durable_offset=self.durable_offsets.get(key, 0))
        self.partitions.clear()
        self._delayed_fetches.clear()
        self.publish(ev.BrokerCrashed(broker=self.id, mode=mode))

    def shutdown(self) -> None:
        """Clean shutdown: checkpoints written, logs flushed and closed, marker left behind."""
        if not self.alive:
            return
        self._write_checkpoints(publish=False)
        if self.kraft is not None:
            self.kraft.stop(clean=True)
        for fetcher in self.fetchers.values():
            fetcher.stop()
        for partition in self.partitions.values():
            was = partition.role
            partition.stop()
            self.groups.on_role_change(partition, was)
            partition.log.close()
        self._write_recovery_checkpoints(publish=False, closed=True)
        with open(os.path.join(self.data_dir, CLEAN_SHUTDOWN_FILE), "w"):
            pass
        self.partitions.clear()
        self.process.go_down()

    # -- timers -----------------------------------------------------------------------------
    def _start_timers(self) -> None:
        config = self.config
        self._every(config.replica_high_watermark_checkpoint_interval_ms, self._write_checkpoints, "HW checkpoint")
        self._every(config.log_flush_offset_checkpoint_interval_ms,
                    lambda: self._write_recovery_checkpoints(publish=True), "recovery-point checkpoint")
        self._every(max(1, config.replica_lag_time_max_ms // 2), self._check_isr_expiration, "isr-expiration")
        self._every(config.log_retention_check_interval_ms, self._run_retention, "log retention")
        self.cleaner = LogCleanerManager(self.data_dir, fsync=self.cluster_config.fsync)
        self._cleaner_armed = False
        self._maybe_arm_cleaner()

    def _maybe_arm_cleaner(self) -> None:
        """Start the log cleaner's timer (every log.cleaner.backoff.ms) once a compacted log has a
        segment besides its active one. Kafka's cleaner thread wakes from the start, but until then
        each wake-up finds nothing cleanable (the active segment is never cleaned): not arming it
        keeps every cluster without such a log on the steps it always ran."""
        if self.cleaner is None or self._cleaner_armed or not self.config.log_cleaner_enable:
            return
        if has_cleanable_candidate(p.log for p in self.partitions.values()):
            self._cleaner_armed = True
            self._every(self.config.log_cleaner_backoff_ms, self._run_cleaner, "log cleaner")

    def _run_cleaner(self) -> None:
        """One wake-up of the cleaner thread: clean the filthiest compacted log until none is cleanable."""
        if self.cleaner is None:
            return
        logs = {key: p.log for key, p in self.partitions.items()}
        for result in self.cleaner.clean_all(self.data_dir, logs, self.world.record_time_ms()):
            topic, p = result.key
            stats = result.stats
            self.publish(ev.LogCleaned(
                broker=self.id, topic=topic, partition=p, first_dirty_offset=result.first_dirty_offset,
                end_offset=result.end_offset, dirty_ratio=round(result.dirty_ratio, 4),
                forced_by_max_lag=result.forced_by_max_lag, segments_cleaned=stats.segments_before,
                segments_after=stats.segments_after, records_before=stats.records_before,
                records_after=stats.records_after, bytes_before=stats.bytes_before, bytes_after=stats.bytes_after,
                tombstones_removed=stats.tombstones_removed, delete_horizons_set=stats.delete_horizons_set,
                segments=[[base, size] for base, size in result.segments]))

    def _every(self, interval_ms: int, action: Callable[[], None], label: str) -> None:
        def tick() -> None:
            action()
            self.schedule(interval_ms, tick, label, foreground=False)
        self.schedule(interval_ms, tick, label, foreground=False)

    def _write_checkpoints(self, publish: bool = True) -> None:
        hws = {key: p.high_watermark for key, p in self.partitions.items()}
        checkpoints.write_offsets(os.path.join(self.data_dir, HW_CHECKPOINT), hws,
                                  fsync=self.cluster_config.fsync)
        self.checkpoint_written_ms[HW_CHECKPOINT] = self.now_ms
        if publish:
            self.publish(ev.CheckpointWritten(broker=self.id, file=HW_CHECKPOINT,
                                              entries={f"{t}-{p}": o for (t, p), o in sorted(hws.items())}))

    def _write_recovery_checkpoints(self, publish: bool = True, closed: bool = False) -> None:
        points = {key: (p.log.log_end_offset if closed else p.log.recovery_point) for key, p in self.partitions.items()}
        starts = {key: p.log.log_start_offset for key, p in self.partitions.items()}
        fsync = self.cluster_config.fsync
        checkpoints.write_offsets(os.path.join(self.data_dir, RECOVERY_CHECKPOINT), points, fsync=fsync)
        checkpoints.write_offsets(os.path.join(self.data_dir, LOG_START_CHECKPOINT), starts, fsync=fsync)
        self.checkpoint_written_ms[RECOVERY_CHECKPOINT] = self.checkpoint_written_ms[LOG_START_CHECKPOINT] = self.now_ms
        if publish:
            self.publish(ev.CheckpointWritten(broker=self.id, file=RECOVERY_CHECKPOINT,
                                              entries={f"{t}-{p}": o for (t, p), o in sorted(points.items())}))

    def _check_isr_expiration(self) -> None:
        for partition in list(self.partitions.values()):
            partition.maybe_shrink_isr()

    def _run_retention(self) -> None:
        now = self.world.record_time_ms()
        for partition in self.partitions.values():
            partition.log.delete_old_segments(now)
            partition.epoch_cache.truncate_from_start(partition.log.log_start_offset)

    def flush_logs(self) -> None:
        """Force every log to disk (the recovery points move to the log ends)."""
        for partition in self.partitions.values():
            partition.log.flush()

    # -- networking -------------------------------------------------------------------------
    def send_to_broker(self, broker_id: int, request: object, summary: dict, *, foreground: bool,
                       on_response: Callable[[object], None]) -> None:
        """A request to another broker; no time-out (the controller's and the fetchers' channels
        re-send on their own schedule)."""
        self.process.send(f"broker-{broker_id}", request, on_response, summary=summary, foreground=foreground)

    def _on_request(self, src: str, envelope: RequestEnvelope) -> None:
        def respond(body: object, summary: dict | None = None, *, foreground: bool = True) -> None:
            self.process.respond(src, envelope, body, summary, foreground=foreground)
        handler = self.handlers.get(type(envelope.body))
        if handler is None:
            name = type(envelope.body).__name__
            respond(UnsupportedRequestResponse(Errors.INVALID_REQUEST, name),
                    {"error": Errors.INVALID_REQUEST, "request": name})
            return
        handler(src, envelope.body, respond)

    def _handle_metadata(self, src: str, request: MetadataRequest, respond) -> None:
        metadata = self.metadata
        topics = sorted(metadata.topic_names()) if request.topics is None else request.topics
        out = []
        for topic in topics:
            count = metadata.partition_count(topic)
            if count == 0 or (self.kraft is None and zk.is_marked_for_deletion(self.store, topic)):
                # A topic being deleted is gone from the brokers' metadata at once (the controller's
                # UpdateMetadata names its partitions' leader LeaderDuringDelete: MetadataCache drops them).
                out.append(TopicMetadata(topic, Errors.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            parts = []
            for p in range(count):
                state = metadata.partition_state(topic, p) or {}
                parts.append(PartitionMetadata(p, state.get("leader", -1), state.get("leader_epoch", -1),
                                               list(state.get("replicas", [])), list(state.get("isr", []))))
            out.append(TopicMetadata(topic, Errors.NONE, parts))
        respond(MetadataResponse(sorted(metadata.registrations()), metadata.controller_id(), out),
                {"topics": topics})

    def _handle_find_coordinator(self, src: str, request: FindCoordinatorRequest, respond) -> None:
        """Any broker answers (KafkaApis.handleFindCoordinatorRequest): the leader of the group's
        __consumer_offsets partition, as the metadata says. The first request creates the topic
        (and gets COORDINATOR_NOT_AVAILABLE)."""
        if request.key_type != 0:
            answer = FindCoordinatorResponse(Errors.INVALID_REQUEST)
        elif not ensure_offsets_topic(self.world, self.metadata, self.config, self.topic_defaults, self.create_topic,
                                      striped=self.kraft is not None):
            answer = FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE)
        else:
            p = coordinator_partition(request.key, self.metadata.partition_count(OFFSETS_TOPIC))
            state = self.metadata.partition_state(OFFSETS_TOPIC, p)
            leader = state["leader"] if state else -1
            answer = FindCoordinatorResponse(Errors.NONE, leader) if leader >= 0 else \
                FindCoordinatorResponse(Errors.COORDINATOR_NOT_AVAILABLE)
        respond(answer, {**response_summary(answer), "group": request.key})

    def _handle_list_offsets(self, src: str, request: ListOffsetsRequest, respond) -> None:
        answer = list_offsets.list_offsets(self.partitions, request)
        respond(answer, list_offsets.summary(answer))

    # -- Produce ----------------------------------------------------------------------------
    def _handle_produce(self, src: str, request: ProduceRequest, respond) -> None:
        """Append each partition's records as its leader; answer once every partition has its
        answer (acks=all: once the HW passed its records), in the request's own shape. A retried
        batch an idempotent producer already wrote is answered with its original offsets."""
        data = request.partition_data()
        answers: list[ProducePartitionResponse | None] = [None] * len(data)

        def respond_when_complete() -> None:
            done = [a for a in answers if a is not None]
            if request.acks == 0 or len(done) < len(answers):
                return  # acks=0: the producer does not wait, the broker never answers
            if request.partitions is None:
                one = done[0]
                respond(ProduceResponse(request.request_id, one.topic, one.partition, one.error, one.base_offset,
                                        one.log_start_offset),
                        {"request_id": request.request_id, "error": one.error, "base_offset": one.base_offset})
            else:
                respond(ProduceResponse(request.request_id, "", -1, Errors.NONE, partitions=done),
                        {"request_id": request.request_id,
                         "partitions": [{"topic": a.topic, "partition": a.partition, "error": a.error,
                                         "base_offset": a.base_offset} for a in done]})

        for index, item in enumerate(data):
            partition = self.partitions.get((item.topic, item.partition))

            def answer(error: str, base_offset: int, index=index, item=item, partition=partition) -> None:
                answers[index] = ProducePartitionResponse(item.topic, item.partition, error, base_offset,
                                                          partition.log.log_start_offset if partition else -1)
                respond_when_complete()
            if is_internal(item.topic):
                # ReplicaManager.appendToLocalLog, before any leadership check: a client may not append
                # to an internal topic (the group coordinator writes __consumer_offsets straight to its
                # partition). Kafka lets the admin client's id through; the engine lets no client.
                answer(Errors.INVALID_TOPIC_EXCEPTION, -1, partition=None)
                continue
            if partition is None:
                answer(self._missing_partition_error(item.topic, item.partition), -1)
                continue
            result = partition.append_as_leader(item.records, request.acks)
            if result.error == Errors.NONE:
                self.complete_delayed_fetches(item.topic, item.partition)
            if result.error != Errors.NONE or request.acks != -1:
                answer(result.error, result.base_offset)
            else:
                partition.wait_for_acks(result, answer, request.timeout_ms)

    # -- Fetch (leader side) ----------------------------------------------------------------
    def _handle_fetch(self, src: str, request: FetchRequest, respond) -> None:
        datas = self._read_for_fetch(request, update_followers=True)
        # A preferred read replica is answered at once too (ReplicaManager.fetchMessages, KIP-392).
        has_data = any(d.records or d.error != Errors.NONE or d.preferred_read_replica >= 0 for d in datas)
        if has_data or request.max_wait_ms <= 0:
            self._respond_fetch(datas, respond)
            return
        delayed = DelayedFetch(src, request, respond)
        delayed.timer = self.schedule(request.max_wait_ms, lambda: self._complete_delayed(delayed),
                                      "fetch long-poll", foreground=False)
        self._delayed_fetches.append(delayed)

    def _read_for_fetch(self, request: FetchRequest, *, update_followers: bool) -> list[FetchPartitionData]:
        out = []
        for fp in request.partitions:
            partition = self.partitions.get((fp.topic, fp.partition))
            if partition is None or (partition.role != "leader" and not _follower_may_serve(partition, request)):
                error = Errors.NOT_LEADER_OR_FOLLOWER if partition is not None else \
                    self._missing_partition_error(fp.topic, fp.partition)
                out.append(FetchPartitionData(fp.topic, fp.partition, error))
                continue
            if fp.current_leader_epoch >= 0 and fp.current_leader_epoch != partition.leader_epoch:
                error = Errors.FENCED_LEADER_EPOCH if fp.current_leader_epoch < partition.leader_epoch \
                    else Errors.UNKNOWN_LEADER_EPOCH
                out.append(FetchPartitionData(fp.topic, fp.partition, error))
                continue
            log = partition.log
            preferred = self._preferred_read_replica(partition, request, fp.fetch_offset)
            if preferred >= 0:   # the read is skipped: the consumer is told where to read instead
                out.append(FetchPartitionData(fp.topic, fp.partition, Errors.NONE, partition.high_watermark,
                                              log.log_start_offset, log.log_end_offset,
                                              preferred_read_replica=preferred))
                continue
            if fp.fetch_offset < log.log_start_offset or fp.fetch_offset > log.log_end_offset:
                out.append(FetchPartitionData(fp.topic, fp.partition, Errors.OFFSET_OUT_OF_RANGE,
                                              partition.high_watermark, log.log_start_offset, log.log_end_offset))
                continue
            # Kafka reads first, then updates the follower's state: the HW in this answer is the
            # one from before this fetch moved it, which is why HW reaches followers a fetch late.
            # A consumer reads below the HW of the replica it asks — a follower's own HW, which
            # trails the leader's by a fetch (Partition.fetchRecords, FetchIsolation.HIGH_WATERMARK).
            max_offset = None if request.replica_id >= 0 else partition.high_watermark
            data = log.read_batches(fp.fetch_offset, fp.partition_max_bytes, max_offset=max_offset)
            out.append(FetchPartitionData(fp.topic, fp.partition, Errors.NONE, partition.high_watermark,
                                          log.log_start_offset, log.log_end_offset, data.records))
            if update_followers and request.replica_id >= 0:
                partition.on_follower_fetch(request.replica_id, fp.fetch_offset)
        return out

    def _preferred_read_replica(self, partition: Partition, request: FetchRequest, fetch_offset: int) -> int:
        """ReplicaManager.findPreferredReadReplica: for a consumer's fetch with client metadata to this
        leader, the replica its replica.selector.class prefers, or -1 (the leader itself, or no
        selector). Candidates: the ISR followers whose log holds the fetch offset (as the leader learnt
        from their last fetch) and that are registered (a broker without an endpoint cannot be chosen)."""
        selector = self.config.replica_selector_class
        if selector is None or partition.role != "leader" or request.replica_id >= 0 or request.rack_id is None:
            return -1
        racks = self.metadata.broker_racks()
        now = self.now_ms
        followers = [ReplicaView(r, racks.get(r), state.log_end_offset, now - state.last_caught_up_ms)
                     for r, state in sorted(partition.followers.items())
                     if r in partition.isr and state.log_end_offset >= fetch_offset and self.is_broker_registered(r)]
        leader = ReplicaView(self.id, self.rack, partition.log_end_offset, 0)
        return preferred_read_replica(selector, request.rack_id, leader, followers)

    def complete_delayed_follower_reads(self, topic: str, partition: int) -> None:
        """This follower's HW moved: answer the consumers' fetches parked on it (ReplicaFetcherThread
        .completeDelayedFetchRequests). Only fetches with client metadata can be parked on a follower."""
        for delayed in list(self._delayed_fetches):
            if delayed.request.rack_id is not None and delayed.request.replica_id < 0 and \
                    any(fp.topic == topic and fp.partition == partition for fp in delayed.request.partitions):
                self.cancel(delayed.timer)
                self._complete_delayed(delayed)

    def _missing_partition_error(self, topic: str, partition: int) -> Errors:
        """A partition this broker does not host (ReplicaManager.getPartitionOrError): NOT_LEADER_OR_FOLLOWER
        if the metadata knows it, UNKNOWN_TOPIC_OR_PARTITION if not (never created, or deleted)."""
        if partition < zk.partition_count(self.store, topic) and not zk.is_marked_for_deletion(self.store, topic):
            return Errors.NOT_LEADER_OR_FOLLOWER
        return Errors.UNKNOWN_TOPIC_OR_PARTITION

    def _respond_fetch(self, datas: list[FetchPartitionData], respond) -> None:
        summary = {"partitions": [{"topic": d.topic, "partition": d.partition, "error": d.error,
                                   "high_watermark": d.high_watermark, "bytes": len(d.records),
                                   **({"preferred_read_replica": d.preferred_read_replica}
                                      if d.preferred_read_replica >= 0 else {})} for d in datas]}
        respond(FetchResponse(datas), summary, foreground=any(d.records for d in datas))

    def _complete_delayed(self, delayed: DelayedFetch) -> None:
        if delayed in self._delayed_fetches:
            self._delayed_fetches.remove(delayed)
            self._respond_fetch(self._read_for_fetch(delayed.request, update_followers=False), delayed.respond)

    def complete_delayed_fetches(self, topic: str, partition: int) -> None:
        """New data in this partition: answer the fetches parked waiting for it (long poll)."""
        for delayed in list(self._delayed_fetches):
            if any(fp.topic == topic and fp.partition == partition for fp in delayed.request.partitions):
                self.cancel(delayed.timer)
                self._complete_delayed(delayed)

    # -- OffsetsForLeaderEpoch (leader side) ------------------------------------------------------
    def _handle_epoch_queries(self, src: str, request: OffsetsForLeaderEpochRequest, respond) -> None:
        respond(self._epoch_end_offsets(request), {"partitions": len(request.partitions)})

    def _epoch_end_offsets(self, request: OffsetsForLeaderEpochRequest) -> OffsetsForLeaderEpochResponse:
        out = []
        for q in request.partitions:
            partition = self.partitions.get((q.topic, q.partition))
            if partition is None or partition.role != "leader":
                out.append(EpochEndOffset(q.topic, q.partition, Errors.NOT_LEADER_OR_FOLLOWER))
            elif q.current_leader_epoch != partition.leader_epoch:
                out.append(EpochEndOffset(q.topic, q.partition, Errors.FENCED_LEADER_EPOCH))
            else:
                epoch, end = partition.epoch_cache.end_offset_for(q.leader_epoch, partition.log_end_offset)
                out.append(EpochEndOffset(q.topic, q.partition, Errors.NONE, epoch, end))
        return OffsetsForLeaderEpochResponse(out)

    # -- LeaderAndIsr -----------------------------------------------------------------------
    def _handle_leader_and_isr(self, src: str, request: LeaderAndIsrRequest, respond) -> None:
        respond(self._apply_leader_and_isr(request), {"partitions": len(request.partitions)})

    def _apply_leader_and_isr(self, request: LeaderAndIsrRequest) -> LeaderAndIsrResponse:
        errors: dict[str, str] = {}
        if request.controller_epoch < self.controller_epoch_seen:
            return LeaderAndIsrResponse(self.id, {"*": Errors.STALE_CONTROLLER_EPOCH})
        self.controller_epoch_seen = request.controller_epoch
        for state in request.partitions:
            key = (state.topic, state.partition)
            partition = self.partitions.get(key) or self._open_partition(key)
            if state.leader_epoch < partition.leader_epoch or (
                    state.leader_epoch == partition.leader_epoch and state.partition_epoch < partition.partition_epoch):
                # Older than what this broker already applied (an ISR change it made itself since,
                # or a retried request overtaken by a newer one): ignore it. Kafka's answer for a
                # partition it ignores this way is STALE_CONTROLLER_EPOCH (ReplicaManager
                # .becomeLeaderOrFollower); there is no error named STALE_LEADER_EPOCH.
                errors[f"{state.topic}-{state.partition}"] = Errors.STALE_CONTROLLER_EPOCH
                continue
            self._apply_partition_state(state)
        return LeaderAndIsrResponse(self.id, errors)

    # -- StopReplica --------------------------------------------------------------------------
    def _handle_stop_replica(self, src: str, request: StopReplicaRequest, respond) -> None:
        """ReplicaManager.stopReplicas: stop fetching, close the log and, with delete_partition,
        delete it (LogManager.asyncDelete: the directory renamed `-delete` at once, removed
        log.segment.delete.delay.ms later). A replica this broker does not hold is stopped already."""
        if request.controller_epoch < self.controller_epoch_seen:
            respond(StopReplicaResponse(self.id, {"*": Errors.STALE_CONTROLLER_EPOCH}), {"error": "stale"})
            return
        self.controller_epoch_seen = request.controller_epoch
        for state in request.partitions:
            key = (state.topic, state.partition)
            self._stop_following(key)
            partition = self.partitions.pop(key, None)
            if partition is not None:
                was = partition.role
                partition.stop()
                self.groups.on_role_change(partition, was)
                partition.log.close()
            self.offline_replicas.pop(key, None)
            if state.delete_partition:
                self._delete_replica_dir(key, had_log=partition is not None)
        respond(StopReplicaResponse(self.id), {"partitions": len(request.partitions)})

    def _delete_replica_dir(self, key: tuple[str, int], had_log: bool) -> None:
        topic, p = key
        path = os.path.join(self.data_dir, f"{topic}-{p}")
        if not os.path.isdir(path):
            return
        unique = uuid.UUID(int=self.stream(DELETED_DIR_STREAM).getrandbits(128), version=4).hex
        renamed = f"{topic}-{p}.{unique}-delete"
        os.rename(path, os.path.join(self.data_dir, renamed))
        self.durable_offsets.pop(key, None)
        if self.cleaner is not None:
            self.cleaner.forget(key)
        delay = self.config.log_segment_delete_delay_ms
        self.publish(ev.ReplicaDeleted(broker=self.id, topic=topic, partition=p, directory=renamed,
                                       removed_after_ms=delay))
        self.schedule(delay, lambda: self._remove_deleted_dir(renamed), f"delete {renamed}", foreground=False)

    def _remove_deleted_dir(self, name: str) -> None:
        path = os.path.join(self.data_dir, name)
        if os.path.isdir(path):
            shutil.rmtree(path)
            match = DELETED_DIR.match(name)
            topic, p = (match.group(1), int(match.group(2))) if match else (name, -1)
            self.publish(ev.DeletedLogRemoved(broker=self.id, topic=topic, partition=p, directory=name))

    def _schedule_deleted_dirs_removal(self) -> None:
        """`-delete` dirs a crash or shutdown left behind go after the delay again (LogManager.loadLogs)."""
        for name in sorted(os.listdir(self.data_dir)):
            if DELETED_DIR.match(name) and os.path.isdir(os.path.join(self.data_dir, name)):
                remove = functools.partial(self._remove_deleted_dir, name)
                self.schedule(self.config.log_segment_delete_delay_ms, remove, f"delete {name}", foreground=False)

    # -- KRaft: the metadata log's changes, applied (ReplicaManager.applyDelta) -----------------------
    def apply_metadata_delta(self, delta: Any, image: Any) -> int:
        """Committed metadata changed: lead or follow the replicas whose state moved, stop those this
        broker no longer holds, delete the replicas of deleted topics. Returns how many changed."""
        changed = 0
        for topic, replicas in sorted(delta.deleted_topics.items()):
            for p in range(len(replicas)):
                if (topic, p) in self.partitions:
                    self._remove_replica((topic, p), delete=True)
                    changed += 1
        for topic, p in sorted(delta.changed_partitions):
            state = image.partition_state(topic, p)
            if state is None:
                continue
            key = (topic, p)
            if self.id not in state["replicas"]:
                if key in self.partitions:
                    self._remove_replica(key, delete=True)
                    changed += 1
                continue
            ps = PartitionState(topic, p, state["leader"], state["leader_epoch"], list(state["isr"]),
                                list(state["replicas"]), state["partition_epoch"])
            partition = self.partitions.get(key)
            if partition is not None and partition.role != "none" and ps.leader_epoch == partition.leader_epoch \
                    and ps.partition_epoch <= partition.partition_epoch:
                continue     # already applied (its own AlterPartition answer came first)
            if partition is not None and self.kraft.altered(partition, ps):
                changed += 1
                continue     # its own AlterPartition, committed: applied as that request's answer
            self._apply_partition_state(ps)
            changed += 1
        return changed

    def _remove_replica(self, key: tuple[str, int], *, delete: bool) -> None:
        """KRaft: stop a replica the metadata no longer gives this broker (its topic deleted, or moved
        away) and, with `delete`, delete its log as StopReplica does in ZooKeeper mode: renamed
        `<topic>-<partition>.<id>-delete`, removed log.segment.delete.delay.ms later (LogManager.asyncDelete)."""
        partition = self.partitions.pop(key)
        self._stop_following(key)
        was = partition.role
        partition.stop()
        self.groups.on_role_change(partition, was)
        partition.log.close()
        self.offline_replicas.pop(key, None)
        if delete:
            self._delete_replica_dir(key, had_log=True)

    def create_topic(self, name: str, assignment: list[list[int]], config: dict, topic_id: str) -> None:
        """A topic this broker creates itself (`__consumer_offsets`): its znodes in ZooKeeper mode, a
        CreateTopics request to the active controller in KRaft."""
        if self.kraft is not None:
            self.kraft.create_topic(name, assignment, config, topic_id)
        else:
            zk.create_topic(self.store, name, assignment, config, topic_id)

    def _apply_partition_state(self, state: PartitionState) -> None:
        """Become leader or follower of one replica as `state` says (LeaderAndIsr's, or the image's)."""
        key = (state.topic, state.partition)
        partition = self.partitions.get(key) or self._open_partition(key)
        was = partition.role
        if state.leader == self.id:
            self._stop_following(key)
            partition.become_leader(state)
        else:
            same = partition.role == "follower" and partition.leader_epoch == state.leader_epoch
            partition.become_follower(state)
            if not same:
                self._follow(key, state)
        if partition.role != was:
            self.groups.on_role_change(partition, was)

    def _follow(self, key: tuple[str, int], state: PartitionState) -> None:
        self._stop_following(key)
        if state.leader < 0:
            return  # offline: nobody to follow until a leader is elected
        fetcher = self.fetchers.get(state.leader)
        if fetcher is None:
            fetcher = self.fetchers[state.leader] = ReplicaFetcher(self, state.leader)
        fetcher.add_partition(key, state.leader_epoch)

    def _stop_following(self, key: tuple[str, int]) -> None:
        for fetcher in self.fetchers.values():
            fetcher.remove_partition(key)

    def pause_fetchers(self) -> None:
        self.fetchers_paused = True
        for fetcher in self.fetchers.values():
            fetcher.abandon_in_flight()

    def resume_fetchers(self) -> None:
        self.fetchers_paused = False
        for fetcher in self.fetchers.values():
            fetcher.maybe_send()

    # -- the controller election (KafkaController.elect) ----------------------------------------
    def _schedule_controller_attempt(self) -> None:
        delay = self.stream(CONTROLLER_ELECTION_STREAM).randint(1, 5)
        self.schedule(delay, self._try_become_controller, "controller election")

    def _try_become_controller(self) -> None:
        assert self.session is not None     # attempts are only scheduled once _register opened the session
        epoch = zk.elect_controller(self.store, self.id, self.session)
        if epoch is None:
            return
        self.controller = Controller(self, self.store, epoch)
        self.publish(ev.ControllerElected(broker=self.id, controller_epoch=epoch))
        self.controller.on_elected()

    def _on_controller_change(self, path: str) -> None:
        """`/controller` changed: if it is gone, whoever was controller resigns (even a broker that
        crashed meanwhile: its session just expired) and every running broker runs again."""
        if self.store.exists(zk.CONTROLLER_PATH):
            return
        if self.controller is not None:
            self.controller.resign()
            self.controller = None
        if self.alive:
            self._schedule_controller_attempt()

    def _on_brokers_change(self, path: str) -> None:
        if self.controller is not None:
            self.controller.on_brokers_changed()

    def _on_topic_change(self, path: str) -> None:
        """A topic's assignment node was written (created, or partitions added): the controller
        creates the new partitions at once. Like the lab always did, a controller whose broker has
        crashed still does, until its session expires and `/controller` goes. A partition's state
        node changed: the controller looks at it if the partition is being moved."""
        if self.controller is None:
            return
        topic = zk.topic_of(path)
        if topic is not None:
            self.controller.on_topic_change(topic)
        else:
            self.controller.on_partition_state_change(path)

    def _on_admin_change(self, path: str) -> None:
        """An `/admin` node changed: a topic marked for deletion, a reassignment or a preferred
        leader election asked for (the controller's TopicDeletion, PartitionReassignment and
        PreferredReplicaElection handlers)."""
        if self.controller is not None:
            self.controller.on_admin_change(path)


def _follower_may_serve(partition: Partition, request: FetchRequest) -> bool:
    """A follower answers a consumer's fetch that carries client metadata (FetchParams.fetchOnlyLeader is
    false for it, KIP-392); a follower's own fetch, or a consumer's without metadata, needs the leader."""
    return partition.role == "follower" and request.replica_id < 0 and request.rack_id is not None


def _as_dict(event: object) -> dict:
    return {k: getattr(event, k) for k in event.__dataclass_fields__}  # type: ignore[attr-defined]


OFFLINE_TAIL_RECORDS = 32   # newest records kept in view of a down replica (they are on its disk)


def _offline_replica(partition: Partition, mode: str, durable_offset: int) -> dict:
    """A crashing replica as it stays on disk: a process crash keeps every written byte (the page
    cache survives), a power loss keeps what was flushed — up to the recovery point, or further
    if an earlier incarnation fsynced more (flushes happen at batch boundaries, so that offset is
    exactly the surviving log end). The high watermark is the last one this replica knew."""
    log = partition.log
    log_end = log.log_end_offset
    if mode == "power":
        log_end = min(log_end, max(log.recovery_point, durable_offset))
    tail_start = max(log.log_start_offset, log_end - OFFLINE_TAIL_RECORDS)
    tail = [(r.offset, r.key, r.value) for r in log.records_from(tail_start) if r.offset < log_end] \
        if tail_start < log_end else []
    return {"log_start_offset": log.log_start_offset, "log_end_offset": log_end,
            "high_watermark": min(partition.high_watermark, log_end), "lost_on_crash": log.log_end_offset - log_end,
            "leader_epoch_cache": [list(e) for e in partition.epoch_cache.entries], "tail": tail}
