"""A broker's side of KRaft mode: its copy of the metadata log, its image, its registration and heartbeats.

Kafka's BrokerServer parts, in one class:
- The Raft client (engine/raft/): an observer that fetches `__cluster_metadata` from the quorum's leader
  into its own log dir; in combined mode (`process.roles=broker,controller`) the node's one Raft
  client is a voter and the node's QuorumController listens to it too.
- BrokerMetadataListener/Publisher: each committed batch is replayed into the broker's MetadataImage;
  what changed is applied to its replicas (ReplicaManager.applyDelta): it becomes leader or follower
  of the partitions whose leader or epoch moved, stops replicas it no longer holds, and deletes the
  replicas of deleted topics. There is no LeaderAndIsr in KRaft.
- BrokerLifecycleManager: it registers with the active controller (BrokerRegistration), then sends a
  heartbeat every broker.heartbeat.interval.ms (2 s) with the metadata offset it has replayed; it
  starts fenced and is unfenced once that offset reaches its registration. A registration refused
  because the previous incarnation's session is still valid is retried.
- AlterPartition for its leaders' ISR changes, AllocateProducerIds for its producer-id blocks, and
  CreateTopics for the topics it creates itself (`__consumer_offsets`), all to the active controller.
"""
from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from engine import events as ev
from engine.common.errors import Errors
from engine.controller import messages as m
from engine.controller.quorum_controller import QuorumController
from engine.metadata import records as mr
from engine.metadata.image import MetadataImage
from engine.protocol import PartitionState
from engine.raft.client import RaftClient

METADATA_DIR = "__cluster_metadata-0"
REGISTRATION_RETRY_MS = 100        # BrokerLifecycleManager's initial retry backoff (exponential, to 10 s)
CONTROLLER_RETRY_MS = 100


class KRaftBrokerMetadata:
    def __init__(self, broker: Any, voters: dict[int, str], quorum_config: Any, *, is_controller: bool) -> None:
        self.broker = broker
        self.voters = voters
        self.quorum_config = quorum_config
        self.is_controller = is_controller
        self.image = MetadataImage()
        self.raft: Any = None
        self.controller: QuorumController | None = None
        self.broker_epoch = -1
        self.fenced = True
        self.incarnation_id = ""
        self._heartbeat_timer: Any = None
        # AlterPartition requests waiting: partition -> (the ISR asked for, what to do once it is in)
        self._alter_in_flight: dict[tuple[str, int], tuple[list[int], Callable[[bool], None]]] = {}

    # -- life cycle ------------------------------------------------------------------------------
    def start(self) -> None:
        """A new incarnation: a fresh image replayed from the local metadata log, a new registration."""
        broker = self.broker
        self.image = MetadataImage()
        self.broker_epoch, self.fenced = -1, True
        self._alter_in_flight = {}
        self.incarnation_id = _incarnation_id(broker.rng("incarnation-id"))
        self.raft = RaftClient(broker.process, broker.id, self.voters,
                               os.path.join(broker.data_dir, METADATA_DIR), self.quorum_config, self,
                               is_voter=self.is_controller)
        if self.is_controller:
            self.controller = QuorumController(broker, broker.id, self.raft, broker.config)
        self.raft.start()
        self._register()

    def stop(self, *, power_loss: bool = False, clean: bool = False) -> None:
        """The broker crashed (or, `clean`, shut down): the Raft client and the controller stop with it."""
        if self.controller is not None:
            self.controller.stop()
        self.broker.cancel(self._heartbeat_timer)
        if self.raft is not None:
            if clean:
                self.raft.close()
            else:
                self.raft.crash(power_loss=power_loss)

    def request_handlers(self) -> dict[type, Any]:
        handlers = dict(self.raft.request_handlers()) if self.raft is not None else {}
        if self.controller is not None:
            handlers.update(self.controller.request_handlers())
        return handlers

    @property
    def metadata_offset(self) -> int:
        return self.image.offset

    # -- the Raft listener -----------------------------------------------------------------------
    def handle_leader_change(self, leader_id: int, epoch: int) -> None:
        self.image.leader = (leader_id, epoch)
        if self.controller is not None:
            self.controller.handle_leader_change(leader_id, epoch)

    def handle_commit(self, base: int, epoch: int, values: list[bytes], control: bool) -> None:
        if self.controller is not None:
            self.controller.handle_commit(base, epoch, values, control)
        if control:
            return
        for i, value in enumerate(values):
            self.image.replay(mr.decode(value), base + i)
        delta = self.image.take_delta()
        if delta:
            changed = self.broker.apply_metadata_delta(delta, self.image)
            self.broker.publish(ev.BrokerMetadataApplied(broker=self.broker.id, offset=self.image.offset,
                                                         partitions_changed=changed))

    # -- registration and heartbeats (BrokerLifecycleManager) ------------------------------------
    def active_controller(self) -> int:
        leader, _ = self.raft.leader_and_epoch() if self.raft is not None else (-1, 0)
        return leader

    def _send(self, request: Any, on_response: Callable[[Any], None], summary: dict, retry: Callable[[], None],
              *, foreground: bool = False) -> None:
        """To the active controller, as the Raft client knows it; with none known, try again shortly."""
        leader = self.active_controller()
        if leader < 0:
            self.broker.schedule(CONTROLLER_RETRY_MS, retry, "find the active controller", foreground=False)
            return
        def answered(response: Any) -> None:
            if response is None:                      # timed out: no answer from that controller
                retry()
            elif getattr(response, "error", None) == Errors.NOT_CONTROLLER:
                self.broker.schedule(CONTROLLER_RETRY_MS, retry, "find the active controller", foreground=False)
            else:
                on_response(response)
        self.broker.process.send(self.voters[leader], request, answered, summary=summary,
                                 timeout_ms=self.quorum_config.request_timeout_ms, foreground=foreground)

    def _register(self) -> None:
        broker = self.broker
        request = m.BrokerRegistrationRequest(broker.id, self.incarnation_id, broker.node, broker.rack,
                                              previous_broker_epoch=self.broker_epoch)

        def answered(response: Any) -> None:
            if response.error == Errors.NONE:
                self.broker_epoch = response.broker_epoch
                self._schedule_heartbeat(0)
            else:   # DUPLICATE_BROKER_REGISTRATION: the previous incarnation's session is still valid
                self.broker.schedule(self.broker.config.broker_heartbeat_interval_ms, self._register,
                                     "broker registration retry", foreground=False)
        self._send(request, answered, {"broker": broker.id}, self._register)

    def _schedule_heartbeat(self, delay_ms: int) -> None:
        self.broker.cancel(self._heartbeat_timer)
        self._heartbeat_timer = self.broker.schedule(delay_ms, self._heartbeat, "broker heartbeat",
                                                     foreground=False)

    def _heartbeat(self) -> None:
        broker = self.broker
        interval = broker.config.broker_heartbeat_interval_ms
        request = m.BrokerHeartbeatRequest(broker.id, self.broker_epoch, self.image.offset)

        def answered(response: Any) -> None:
            if response.error in (Errors.STALE_BROKER_EPOCH, Errors.BROKER_ID_NOT_REGISTERED):
                self._register()     # the controller no longer knows this incarnation: register again
                return
            if response.error == Errors.NONE:
                self.fenced = response.is_fenced
            self._schedule_heartbeat(interval)
        self._send(request, answered, {"broker": broker.id, "metadata_offset": self.image.offset},
                   lambda: self._schedule_heartbeat(interval))

    # -- requests a broker makes of the controller --------------------------------------------------
    def alter_partition(self, partition: Any, new_isr: list[int], on_done: Callable[[bool], None]) -> None:
        """Ask the controller to change the ISR (AlterPartitionManager). `on_done(True)` once it committed
        with the partition's new ISR and epoch applied; `on_done(False)` when refused."""
        key = (partition.topic, partition.partition)
        if key in self._alter_in_flight:
            return
        topic = self.image.topics.get(partition.topic)
        if topic is None:
            return
        self._alter_in_flight[key] = (list(new_isr), on_done)
        request = m.AlterPartitionRequest(self.broker.id, self.broker_epoch, partition.topic, topic.topic_id,
                                          partition.partition, partition.leader_epoch, list(new_isr),
                                          partition.partition_epoch)

        def answered(response: Any) -> None:
            if key not in self._alter_in_flight:
                return      # the committed change came through the metadata log first (altered())
            del self._alter_in_flight[key]
            ok = response.error == Errors.NONE and partition.role == "leader" \
                and response.leader_epoch == partition.leader_epoch \
                and response.partition_epoch > partition.partition_epoch
            if ok:
                partition.isr = list(response.isr)
                partition.partition_epoch = response.partition_epoch
            on_done(ok)
        def gave_up() -> None:      # no controller answered: the next ISR check asks again
            self._alter_in_flight.pop(key, None)
        self._send(request, answered, {"topic": partition.topic, "partition": partition.partition,
                                       "isr": list(new_isr)}, gave_up)

    def altered(self, partition: Any, state: Any) -> bool:
        """The metadata log brought a change of a partition this broker leads: if it is the ISR its
        AlterPartition asked for (same leader epoch), take it as that request's answer — whichever of
        the two arrives first. True when it did."""
        key = (partition.topic, partition.partition)
        waiting = self._alter_in_flight.get(key)
        if waiting is None or partition.role != "leader" or state.leader_epoch != partition.leader_epoch \
                or state.leader != self.broker.id or list(state.isr) != waiting[0]:
            return False
        del self._alter_in_flight[key]
        partition.isr = list(state.isr)
        partition.partition_epoch = state.partition_epoch
        waiting[1](True)
        return True

    def create_topic(self, name: str, assignment: list[list[int]], config: dict, topic_id: str) -> None:
        """CreateTopics to the controller (what a broker's auto topic creation forwards)."""
        self._send(m.CreateTopicsRequest(name, assignment, config, topic_id), lambda response: None,
                   {"topic": name}, lambda: None, foreground=True)

    def allocate_producer_ids(self, on_done: Callable[[int, int], None]) -> None:
        def answered(response: Any) -> None:
            if response.error == Errors.NONE:
                on_done(response.producer_id_start, response.producer_id_len)
            else:
                on_done(-1, 0)
        self._send(m.AllocateProducerIdsRequest(self.broker.id, self.broker_epoch), answered,
                   {"broker": self.broker.id}, lambda: on_done(-1, 0))


def partition_state(topic: str, partition: int, state: dict) -> PartitionState:
    return PartitionState(topic, partition, state["leader"], state["leader_epoch"], list(state["isr"]),
                          list(state["replicas"]), state["partition_epoch"])


def _incarnation_id(rng: Any) -> str:
    import base64
    return base64.urlsafe_b64encode(rng.getrandbits(128).to_bytes(16, "big")).decode().rstrip("=")
