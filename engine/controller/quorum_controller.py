"""KRaft's controller: the Raft leader of the controller quorum, writing the cluster's metadata as records.

Kafka's QuorumController with ClusterControlManager, BrokerHeartbeatManager, ReplicationControlManager
and ProducerIdControlManager folded in, reduced to what the lab shows. Every controller node (a voter
of the `__cluster_metadata` quorum, engine/raft/) runs one; the one whose Raft client leads is active,
the others replay the committed records and wait.

How it differs from ZooKeeper mode's controller (engine/replication/controller.py):
- Nothing is written anywhere but the metadata log. A change is a list of records (RegisterBrokerRecord,
  TopicRecord, PartitionRecord, PartitionChangeRecord, BrokerRegistrationChangeRecord, ...) appended by
  the active controller; it takes effect for everyone when it commits (a majority of voters has it),
  and brokers learn of it by fetching the log — there are no LeaderAndIsr requests.
- The active controller replays its own records into its image as it writes them (so the next change
  builds on them), and answers the request that caused them only once they commit. It becomes active
  only once it has replayed every record before its own epoch's LeaderChange record (KafkaRaftClient
  fires handleLeaderChange only then; here the controller waits for its epoch's control batch to commit).
- Brokers are alive while they heartbeat: a broker registers (BrokerRegistration: its epoch is the
  offset of its RegisterBrokerRecord, and it starts fenced), is unfenced once its heartbeat says it has
  replayed the metadata up to its registration, and is fenced again when no heartbeat came for
  broker.session.timeout.ms (9 s; brokers send one every broker.heartbeat.interval.ms, 2 s). A fenced
  broker may not lead or be in an ISR: fencing it moves leadership away, as a session expiry does in
  ZooKeeper mode.
- A partition leader does not write its ISR: it asks with AlterPartition, and the controller checks
  the leader epoch and partition epoch it was based on (FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION)
  and that every new member is an unfenced broker (INELIGIBLE_REPLICA).
- A new active controller starts every registered broker's session afresh (BrokerHeartbeatManager is
  in memory only), as Kafka's does on activation.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from engine import events as ev
from engine.common.config_values import parse_config_value
from engine.common.errors import Errors, KafkaError
from engine.controller import messages as m
from engine.controller.partition_change import Election, build_change, preferred_election
from engine.metadata import records as mr
from engine.metadata.image import FENCE, NO_LEADER, NO_LEADER_CHANGE, UNFENCE, MetadataImage
from engine.replication.reassignment import (
    PartitionLeadership,
    auto_rebalance_candidates,
    is_reassignment_complete,
    reassignment_leader,
    reassignment_state,
)
from engine.storage.errors import InvalidConfigError

METADATA_VERSION_LEVEL = 25          # MetadataVersion IBP_4_0_IV3's feature level (the newest 4.0 one)
PRODUCER_ID_BLOCK_SIZE = 1000        # ProducerIdControlManager hands out blocks of 1000
TOPIC_RESOURCE = 2


class RaftLeader(Protocol):
    """What the controller needs of its node's Raft client (engine/raft/client.py)."""
    def append(self, values: list[bytes]) -> int: ...
    @property
    def log_end_offset(self) -> int: ...


@dataclass
class _Pending:
    offset: int
    on_commit: Callable[[], None]
    on_fail: Callable[[], None]


class QuorumController:
    def __init__(self, host: Any, node_id: int, raft: Any, config: Any) -> None:
        """`host`: the node the controller runs in (a broker's process in combined mode, or a
        dedicated controller's), with schedule/cancel/publish/now_ms; `raft`: that node's Raft client;
        `config`: the broker settings (unclean.leader.election.enable, broker.session.timeout.ms)."""
        self.host = host
        self.node_id = node_id
        self.raft = raft
        self.config = config
        self.committed = MetadataImage()         # every committed record, replayed
        self.image = self.committed              # while active: committed + its own written records
        self.active_epoch = -1                   # the epoch it is active in (-1: standby)
        self.last_committed_offset = -1
        self._pending: list[_Pending] = []
        self._sessions: dict[int, Any] = {}      # broker -> its session expiry timer (BrokerHeartbeatManager)
        self._caught_up: set[int] = set()

    # -- Raft listener -------------------------------------------------------------------------
    def handle_leader_change(self, leader_id: int, epoch: int) -> None:
        """The Raft leader changed. A new leader elsewhere: this controller renounces. This node
        leading: it is active from now (the Raft client tells it only once it has been handed every
        batch before its epoch, KafkaRaftClient's maybeFireLeaderChange)."""
        self.committed.leader = (leader_id, epoch)
        if self.image is not self.committed:
            self.image.leader = (leader_id, epoch)
        if leader_id == self.node_id:
            if self.active_epoch != epoch:
                self._activate(epoch)
        elif self.active_epoch >= 0:
            self._renounce(f"node {leader_id} leads epoch {epoch}" if leader_id >= 0 else f"epoch {epoch} began")

    def handle_commit(self, base_offset: int, epoch: int, values: list[bytes], control: bool) -> None:
        """A batch committed: replay it (unless this controller wrote it and replayed it already)."""
        last = base_offset + len(values) - 1
        if not control:
            mine = self.active_epoch >= 0 and epoch == self.active_epoch
            for i, value in enumerate(values):
                record = mr.decode(value)
                self.committed.replay(record, base_offset + i)
                if not mine and self.image is not self.committed:
                    self.image.replay(record, base_offset + i)
        self.last_committed_offset = max(self.last_committed_offset, last)
        self._complete_pending()
        if not control and self.active_epoch >= 0:
            # The records as they commit, once, from the active controller (the lab's metadata view).
            self.host.publish(ev.MetadataCommitted(
                node=self.node_id, base_offset=base_offset, last_offset=last, epoch=epoch,
                records=[mr.describe(mr.decode(v)) for v in values]))

    # -- activation ------------------------------------------------------------------------------
    def is_active(self) -> bool:
        return self.active_epoch >= 0 and self.host.alive

    def _activate(self, epoch: int) -> None:
        self.active_epoch = epoch
        self.image = copy.deepcopy(self.committed)
        self.image.take_delta()
        self.host.publish(ev.QuorumControllerActivated(node=self.node_id, epoch=epoch))
        if not self.committed.features:
            # The first controller of a new cluster writes the bootstrap records (BootstrapMetadata).
            self._write([mr.FeatureLevelRecord(name="metadata.version", feature_level=METADATA_VERSION_LEVEL)])
        for broker in sorted(self.image.brokers):
            self._touch(broker)
        self._schedule_leader_rebalance()

    def _renounce(self, reason: str) -> None:
        """Lost the leadership: drop what did not commit, fail the requests waiting on it."""
        self.active_epoch = -1
        self.image = self.committed
        for timer in self._sessions.values():
            self.host.cancel(timer)
        self._sessions.clear()
        pending, self._pending = self._pending, []
        for p in pending:
            p.on_fail()
        self.host.publish(ev.QuorumControllerRenounced(node=self.node_id, reason=reason))

    def stop(self) -> None:
        """Its node crashed: its in-memory state goes with it."""
        self._pending.clear()
        self._sessions.clear()
        self.active_epoch = -1

    # -- writing ---------------------------------------------------------------------------------
    def _write(self, records: list[Any], on_commit: Callable[[], None] | None = None,
               on_fail: Callable[[], None] | None = None) -> int:
        """Append the records as one batch, replay them into the working image; `on_commit` runs once
        they commit. Returns the offset of the first record.

        Everything is in place before the append: with a single voter the batch commits inside it."""
        first = self.raft.log_end_offset
        last = first + len(records) - 1
        for i, record in enumerate(records):
            self.image.replay(record, first + i)
        self._pending.append(_Pending(last, on_commit or (lambda: None), on_fail or (lambda: None)))
        self._append(records, last)
        return first

    def _append(self, records: list[Any], last: int) -> None:
        """Append as the Raft leader. Leadership lost since (not yet heard by this controller): renounce,
        which fails what waited and drops the records from the image."""
        try:
            written = self.raft.append([mr.encode(r) for r in records])
        except KafkaError:      # the Raft client's NotLeaderError
            self._renounce("no longer the Raft leader")
            return
        assert written == last, (written, last)

    def _complete_pending(self) -> None:
        while self._pending and self._pending[0].offset <= self.last_committed_offset:
            self._pending.pop(0).on_commit()

    # -- requests ----------------------------------------------------------------------------------
    def request_handlers(self) -> dict[type, Callable[[str, Any, Callable[..., None]], None]]:
        return {m.BrokerRegistrationRequest: self._handle_registration,
                m.BrokerHeartbeatRequest: self._handle_heartbeat,
                m.AlterPartitionRequest: self._handle_alter_partition,
                m.CreateTopicsRequest: self._handle_create_topics,
                m.CreatePartitionsRequest: self._handle_create_partitions,
                m.DeleteTopicsRequest: self._handle_delete_topics,
                m.AllocateProducerIdsRequest: self._handle_allocate_producer_ids}

    def _not_controller(self, respond: Callable[..., None], answer: Any) -> bool:
        if self.is_active():
            return False
        respond(answer, {"error": Errors.NOT_CONTROLLER})
        return True

    def _handle_registration(self, src: str, request: m.BrokerRegistrationRequest, respond) -> None:
        """ClusterControlManager.registerBroker: the broker starts fenced; its epoch is the offset of
        its RegisterBrokerRecord. Another incarnation whose session is still valid is refused
        (DUPLICATE_BROKER_REGISTRATION): a broker that restarts at once waits for its old session."""
        if self._not_controller(respond, m.BrokerRegistrationResponse(Errors.NOT_CONTROLLER)):
            return
        existing = self.image.brokers.get(request.broker_id)
        if existing is not None and request.broker_id in self._sessions and not existing.fenced \
                and existing.incarnation_id != request.incarnation_id:
            respond(m.BrokerRegistrationResponse(Errors.DUPLICATE_BROKER_REGISTRATION),
                    {"error": Errors.DUPLICATE_BROKER_REGISTRATION})
            return
        epoch = self.raft.log_end_offset
        record = mr.RegisterBrokerRecord(
            broker_id=request.broker_id, incarnation_id=request.incarnation_id,
            broker_epoch=epoch, end_points=[mr.BrokerEndpoint(name="PLAINTEXT", host=request.host, port=9092,
                                                              security_protocol=0)],
            rack=request.rack, fenced=True)
        answer = m.BrokerRegistrationResponse(Errors.NONE, epoch)

        def registered() -> None:
            self.host.publish(ev.BrokerRegistered(broker=request.broker_id, broker_epoch=epoch))
            respond(answer, {"error": Errors.NONE, "broker_epoch": epoch})
        self._write([record], registered,
                    lambda: respond(m.BrokerRegistrationResponse(Errors.NOT_CONTROLLER),
                                    {"error": Errors.NOT_CONTROLLER}))
        self._touch(request.broker_id)

    def _handle_heartbeat(self, src: str, request: m.BrokerHeartbeatRequest, respond) -> None:
        if self._not_controller(respond, m.BrokerHeartbeatResponse(Errors.NOT_CONTROLLER)):
            return
        broker = self.image.brokers.get(request.broker_id)
        if broker is None or broker.epoch != request.broker_epoch:
            error = Errors.BROKER_ID_NOT_REGISTERED if broker is None else Errors.STALE_BROKER_EPOCH
            respond(m.BrokerHeartbeatResponse(error), {"error": error})
            return
        self._touch(request.broker_id)
        caught_up = request.current_metadata_offset >= broker.epoch
        if caught_up:
            self._caught_up.add(request.broker_id)

        def answer() -> None:
            now = self.image.brokers.get(request.broker_id)
            fenced = now is None or now.fenced
            respond(m.BrokerHeartbeatResponse(Errors.NONE, caught_up, fenced),
                    {"error": Errors.NONE, "fenced": fenced, "metadata_offset": request.current_metadata_offset})
        if broker.fenced and caught_up and not request.want_fence:
            self._unfence(request.broker_id, answer)
        else:
            answer()

    def _handle_alter_partition(self, src: str, request: m.AlterPartitionRequest, respond) -> None:
        """ReplicationControlManager.alterPartition for one partition."""
        if self._not_controller(respond, m.AlterPartitionResponse(Errors.NOT_CONTROLLER)):
            return
        partition = self.image.partition(request.topic, request.partition)
        error = Errors.NONE
        broker = self.image.brokers.get(request.broker_id)
        if partition is None or request.topic_id != self.image.topics[request.topic].topic_id:
            error = Errors.UNKNOWN_TOPIC_OR_PARTITION
        elif broker is None or broker.epoch != request.broker_epoch:
            error = Errors.STALE_BROKER_EPOCH
        elif partition.leader != request.broker_id:
            error = Errors.NOT_LEADER_OR_FOLLOWER
        elif request.leader_epoch != partition.leader_epoch:
            error = Errors.FENCED_LEADER_EPOCH
        elif request.partition_epoch != partition.partition_epoch:
            error = Errors.INVALID_UPDATE_VERSION
        elif any(not self._acceptable(r) or r not in partition.replicas for r in request.new_isr) \
                or request.broker_id not in request.new_isr:
            error = Errors.INELIGIBLE_REPLICA
        if error != Errors.NONE:
            respond(m.AlterPartitionResponse(error, request.topic, request.partition), {"error": error})
            return
        assert partition is not None
        record = mr.PartitionChangeRecord(partition_id=request.partition,
                                          topic_id=request.topic_id,
                                          isr=list(request.new_isr), leader=NO_LEADER_CHANGE)
        completed = self._complete_reassignment(request.topic, partition, record)

        def committed() -> None:
            now = self.image.partition(request.topic, request.partition)
            if completed and now is not None:
                if now.leader != request.broker_id:
                    self.host.publish(ev.LeaderElected(
                        topic=request.topic, partition=request.partition, leader=now.leader,
                        leader_epoch=now.leader_epoch, isr=list(now.isr), reason="reassignment",
                        previous_leader=request.broker_id))
                self.host.publish(ev.ReassignmentCompleted(topic=request.topic, partition=request.partition,
                                                           replicas=list(now.replicas), leader=now.leader,
                                                           isr=list(now.isr)))
            if now is None:
                respond(m.AlterPartitionResponse(Errors.UNKNOWN_TOPIC_OR_PARTITION), {})
                return
            respond(m.AlterPartitionResponse(Errors.NONE, request.topic, request.partition, now.leader,
                                             now.leader_epoch, list(now.isr), now.partition_epoch),
                    {"error": Errors.NONE, "isr": list(now.isr), "partition_epoch": now.partition_epoch})
        self._write([record], committed, lambda: respond(m.AlterPartitionResponse(Errors.NOT_CONTROLLER),
                                                          {"error": Errors.NOT_CONTROLLER}))

    def _handle_create_topics(self, src: str, request: m.CreateTopicsRequest, respond) -> None:
        if self._not_controller(respond, m.CreateTopicsResponse(Errors.NOT_CONTROLLER)):
            return
        error, message = self.create_topic(request.name, request.assignment, request.config, request.topic_id,
                                           lambda: respond(m.CreateTopicsResponse(Errors.NONE),
                                                           {"topic": request.name}))
        if error != Errors.NONE:
            respond(m.CreateTopicsResponse(error, message), {"error": error, "topic": request.name})

    def create_topic(self, name: str, assignment: list[list[int]], config: dict, topic_id: str,
                     on_commit: Callable[[], None] | None = None) -> tuple[str, str]:
        """ReplicationControlManager.createTopic: a TopicRecord, its ConfigRecords, a PartitionRecord
        per partition with the unfenced replicas as ISR and the first of them as leader. A partition
        none of whose replicas is unfenced is refused, as Kafka does (ZooKeeper mode created it offline)."""
        if name in self.image.topics:
            return Errors.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists."
        for p, replicas in enumerate(assignment):
            missing = [r for r in replicas if r not in self.image.brokers]
            if missing:
                return Errors.INVALID_REPLICA_ASSIGNMENT, f"partition {p}: brokers {missing} are not registered"
            if not any(self._acceptable(r) for r in replicas):
                return (Errors.INVALID_REPLICATION_FACTOR,
                        f"Unable to replicate the partition {len(replicas)} time(s): all brokers specified in the "
                        f"assignment for partition {p} are fenced or in controlled shutdown.")
        uid = topic_id
        records: list[Any] = [mr.TopicRecord(name=name, topic_id=uid)]
        records += [mr.ConfigRecord(resource_type=TOPIC_RESOURCE, resource_name=name, name=k, value=str(v))
                    for k, v in sorted(config.items())]
        records += self._partition_records(uid, assignment, 0)
        def created() -> None:
            self._announce_topic(name, assignment, config, 0)
            if on_commit is not None:
                on_commit()
        self._write(records, created)
        return Errors.NONE, ""

    def _partition_records(self, uid: Any, assignment: list[list[int]], first: int) -> list[Any]:
        out = []
        for p, replicas in enumerate(assignment, start=first):
            isr = [r for r in replicas if self._acceptable(r)]
            out.append(mr.PartitionRecord(partition_id=p, topic_id=uid, replicas=list(replicas), isr=isr,
                                          leader=isr[0], leader_epoch=0, partition_epoch=0))
        return out

    def _announce_topic(self, name: str, assignment: list[list[int]], config: dict, first: int) -> None:
        image = self.committed
        if first == 0:
            self.host.publish(ev.TopicCreated(topic=name, partitions=len(assignment),
                                              replication_factor=len(assignment[0]), assignment=assignment,
                                              config=dict(config)))
        else:
            self.host.publish(ev.PartitionsAdded(topic=name, partitions=first + len(assignment), added=assignment))
        for p in range(first, first + len(assignment)):
            state = image.partition(name, p)
            if state is not None:
                self.host.publish(ev.LeaderElected(topic=name, partition=p, leader=state.leader,
                                                   leader_epoch=state.leader_epoch, isr=list(state.isr),
                                                   reason="new topic", previous_leader=-1))

    def _handle_create_partitions(self, src: str, request: m.CreatePartitionsRequest, respond) -> None:
        if self._not_controller(respond, m.ControllerResponse(Errors.NOT_CONTROLLER)):
            return
        topic = self.image.topics.get(request.topic)
        if topic is None:
            respond(m.ControllerResponse(Errors.UNKNOWN_TOPIC_OR_PARTITION),
                    {"error": Errors.UNKNOWN_TOPIC_OR_PARTITION})
            return
        for replicas in request.added:
            if not any(self._acceptable(r) for r in replicas):
                respond(m.ControllerResponse(Errors.INVALID_REPLICA_ASSIGNMENT), {})
                return
        first = len(topic.partitions)
        records = self._partition_records(topic.topic_id, request.added, first)
        def added() -> None:
            self._announce_topic(request.topic, request.added, {}, first)
            respond(m.ControllerResponse(Errors.NONE), {"topic": request.topic})
        self._write(records, added)

    def _handle_delete_topics(self, src: str, request: m.DeleteTopicsRequest, respond) -> None:
        """ReplicationControlManager.deleteTopic: one RemoveTopicRecord; each broker deletes its
        replicas when it replays it (no StopReplica requests in KRaft)."""
        if self._not_controller(respond, m.ControllerResponse(Errors.NOT_CONTROLLER)):
            return
        topic = self.image.topics.get(request.topic)
        if topic is None:
            respond(m.ControllerResponse(Errors.UNKNOWN_TOPIC_OR_PARTITION),
                    {"error": Errors.UNKNOWN_TOPIC_OR_PARTITION})
            return
        name, count = request.topic, len(topic.partitions)

        def deleted() -> None:
            self.host.publish(ev.TopicDeleted(topic=name, partitions=count))
            respond(m.ControllerResponse(Errors.NONE), {"topic": name})
        self._write([mr.RemoveTopicRecord(topic_id=topic.topic_id)], deleted)

    def _handle_allocate_producer_ids(self, src: str, request: m.AllocateProducerIdsRequest, respond) -> None:
        if self._not_controller(respond, m.AllocateProducerIdsResponse(Errors.NOT_CONTROLLER)):
            return
        broker = self.image.brokers.get(request.broker_id)
        if broker is None or broker.epoch != request.broker_epoch:
            respond(m.AllocateProducerIdsResponse(Errors.STALE_BROKER_EPOCH), {"error": Errors.STALE_BROKER_EPOCH})
            return
        start = self.image.next_producer_id
        record = mr.ProducerIdsRecord(broker_id=request.broker_id, broker_epoch=request.broker_epoch,
                                      next_producer_id=start + PRODUCER_ID_BLOCK_SIZE)
        answer = m.AllocateProducerIdsResponse(Errors.NONE, start, PRODUCER_ID_BLOCK_SIZE)
        self._write([record], lambda: respond(answer, {"producer_id_start": start}))

    # -- broker liveness (BrokerHeartbeatManager) ----------------------------------------------------
    def _acceptable(self, broker_id: int) -> bool:
        """ClusterControlManager.isActive: registered, unfenced, not shutting down."""
        broker = self.image.brokers.get(broker_id)
        return broker is not None and not broker.fenced and not broker.in_controlled_shutdown

    def _touch(self, broker_id: int) -> None:
        """A heartbeat (or activation): the broker's session runs broker.session.timeout.ms from now."""
        self.host.cancel(self._sessions.get(broker_id))
        self._sessions[broker_id] = self.host.schedule(
            self.config.broker_session_timeout_ms, lambda: self._session_expired(broker_id),
            f"session of broker {broker_id} (controller {self.node_id})", foreground=False)

    def _session_expired(self, broker_id: int) -> None:
        self._sessions.pop(broker_id, None)
        if not self.is_active():
            return
        broker = self.image.brokers.get(broker_id)
        if broker is None or broker.fenced:
            return
        self._fence(broker_id, f"no heartbeat for {self.config.broker_session_timeout_ms} ms "
                               "(broker.session.timeout.ms)")

    def _fence(self, broker_id: int, reason: str) -> None:
        """ReplicationControlManager.handleBrokerFenced: fence it, take it out of every ISR and elect
        new leaders where it led."""
        broker = self.image.brokers[broker_id]
        records: list[Any] = [mr.BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=broker.epoch,
                                                                fenced=FENCE)]
        self.image.replay(records[0], self.raft.log_end_offset)   # so the elections below see it fenced
        changes = self._leader_and_isr_updates(remove=broker_id)
        def fenced() -> None:
            self.host.publish(ev.BrokerFenced(broker=broker_id, reason=reason))
            self._announce_changes(changes, f"broker {broker_id} fenced")
        self._write_replayed(records, changes, fenced)

    def _unfence(self, broker_id: int, then: Callable[[], None]) -> None:
        """handleBrokerUnfenced: unfence it and give it the leadership of partitions that had none."""
        broker = self.image.brokers[broker_id]
        records: list[Any] = [mr.BrokerRegistrationChangeRecord(broker_id=broker_id, broker_epoch=broker.epoch,
                                                                fenced=UNFENCE)]
        self.image.replay(records[0], self.raft.log_end_offset)
        changes = self._leader_and_isr_updates(add=broker_id)
        def unfenced() -> None:
            self.host.publish(ev.BrokerUnfenced(broker=broker_id))
            self._announce_changes(changes, "partition back online")
            then()
        self._write_replayed(records, changes, unfenced)

    def _write_replayed(self, head: list[Any], changes: list[tuple[str, int, Any, Election, list[int]]],
                        on_commit: Callable[[], None]) -> None:
        """Write `head` (already replayed into the working image) and the partition changes."""
        records = head + [c[2] for c in changes]
        first = self.raft.log_end_offset
        last = first + len(records) - 1
        self.image.offset = first
        for i, (_, _, record, _, _) in enumerate(changes, start=len(head)):
            self.image.replay(record, first + i)
        self._pending.append(_Pending(last, on_commit, lambda: None))
        self._append(records, last)

    def _leader_and_isr_updates(self, *, remove: int = NO_LEADER, add: int = NO_LEADER
                                ) -> list[tuple[str, int, Any, Election, list[int]]]:
        """generateLeaderAndIsrUpdates: a change for each partition that needs one."""
        out = []
        for name, topic in self.image.topics.items():
            unclean = self._unclean_allowed(name)
            for p, partition in sorted(topic.partitions.items()):
                if remove != NO_LEADER and remove not in partition.isr and partition.leader != remove:
                    continue
                if add != NO_LEADER and not (partition.leader == NO_LEADER and add in partition.replicas):
                    continue
                target = [r for r in partition.isr if r != remove]
                record, election = build_change(topic.topic_id, p, partition, target, self._acceptable, unclean)
                if record is not None:
                    out.append((name, p, record, election, [partition.leader, *partition.isr]))
        return out

    def _announce_changes(self, changes: list[tuple[str, int, Any, Election, list[int]]], reason: str) -> None:
        for name, p, record, election, before in changes:
            leader_before, isr_before = before[0], before[1:]
            state = self.committed.partition(name, p)
            if state is None:
                continue
            if record.leader != NO_LEADER_CHANGE:
                if state.leader < 0:
                    self.host.publish(ev.PartitionOffline(topic=name, partition=p, leader_epoch=state.leader_epoch,
                                                          isr=list(state.isr), reason="no unfenced replica in the ISR"))
                else:
                    self.host.publish(ev.LeaderElected(
                        topic=name, partition=p, leader=state.leader, leader_epoch=state.leader_epoch,
                        isr=list(state.isr), reason="unclean" if election.unclean else reason,
                        previous_leader=leader_before, unclean=election.unclean))
            elif record.isr is not None:
                removed = [r for r in isr_before if r not in state.isr]
                if removed:
                    self.host.publish(ev.IsrShrunk(topic=name, partition=p, leader=state.leader, removed=removed,
                                                   isr=list(state.isr), reason=f"{reason} (controller)"))

    def _unclean_allowed(self, topic: str) -> bool:
        value = self.image.configs.get(topic, {}).get("unclean.leader.election.enable")
        if value is None:
            return bool(self.config.unclean_leader_election_enable)
        return bool(parse_config_value("unclean.leader.election.enable", value, "bool", InvalidConfigError))

    # -- admin: partition reassignment (KIP-455 in KRaft) -------------------------------------------------
    def alter_partition_reassignments(self, moves: list[tuple[str, int, list[int]]]) -> list[tuple[str, int]]:
        """ReplicationControlManager.alterPartitionReassignments: for each partition, one
        PartitionChangeRecord with replicas RS = target + the originals being removed, adding and
        removing replicas. The new replicas replay it and start following; the move completes in the
        AlterPartition that puts every target replica in the ISR. Returns the partitions that move."""
        if not self.is_active():
            return []
        changes, started = [], []
        for name, p, target in moves:
            partition = self.image.partition(name, p)
            if partition is None or list(target) == partition.replicas:
                continue
            state = reassignment_state(partition.replicas, list(target))
            record = mr.PartitionChangeRecord(partition_id=p, topic_id=self.image.topics[name].topic_id,
                                              replicas=state.replicas, adding_replicas=state.adding,
                                              removing_replicas=state.removing, leader=NO_LEADER_CHANGE)
            changes.append(record)
            started.append((name, p, list(partition.replicas), list(target), state))
        if not changes:
            return []

        def announce() -> None:
            for name, p, original, target, state in started:
                self.host.publish(ev.ReassignmentStarted(topic=name, partition=p, original=original, target=target,
                                                         replicas=state.replicas, adding=state.adding,
                                                         removing=state.removing))
        self._write(changes, announce)
        return [(name, p) for name, p, *_ in started]

    def _complete_reassignment(self, topic: str, partition: Any, record: Any) -> bool:
        """PartitionChangeBuilder.completeReassignmentIfNeeded, folded into an AlterPartition's record:
        once every target replica is in the new ISR, the replicas become the target, the removed ones
        leave the ISR, and a leader outside the target hands over to the first target replica in the
        ISR. Replicas leaving means a new leader epoch (triggerLeaderEpochBumpForReplicaReassignment)."""
        if not partition.adding_replicas and not partition.removing_replicas:
            return False
        target = [r for r in partition.replicas if r not in partition.removing_replicas]
        isr = list(record.isr)
        if not is_reassignment_complete(target, isr):
            return False
        record.replicas = target
        record.isr = [r for r in isr if r in target]
        record.adding_replicas, record.removing_replicas = [], []
        if partition.leader not in target:
            leader = reassignment_leader(target, record.isr, {r for r in target if self._acceptable(r)})
            record.leader = NO_LEADER if leader is None else leader
        else:
            record.leader = partition.leader     # the replica set shrank: bump the leader epoch
        return True

    def ongoing_reassignments(self) -> set[tuple[str, int]]:
        return {(name, p) for name, topic in self.committed.topics.items()
                for p, partition in topic.partitions.items()
                if partition.adding_replicas or partition.removing_replicas}

    # -- auto.leader.rebalance.enable -------------------------------------------------------------------
    def _schedule_leader_rebalance(self) -> None:
        """QuorumController's periodic leader balancing (maybeBalancePartitionLeaders), when enabled."""
        if not getattr(self.config, "auto_leader_rebalance_enable", False):
            return
        epoch = self.active_epoch

        def check() -> None:
            if self.active_epoch != epoch or not self.is_active():
                return
            live = {b for b in self.image.brokers if self._acceptable(b)}
            partitions = [PartitionLeadership(name, p, list(part.replicas), part.leader, list(part.isr))
                          for name, topic in self.image.topics.items() for p, part in sorted(topic.partitions.items())]
            candidates = auto_rebalance_candidates(partitions, live, self.config.leader_imbalance_per_broker_percentage)
            if candidates:
                self.elect_preferred_leaders(candidates, reason="auto leader rebalance")
            self._schedule_leader_rebalance()
        self.host.schedule(self.config.leader_imbalance_check_interval_seconds * 1000, check,
                           "leader imbalance check", foreground=False)

    # -- admin: preferred leader election ------------------------------------------------------------
    def elect_preferred_leaders(self, partitions: list[tuple[str, int]], *,
                                reason: str = "preferred replica election") -> list[tuple[str, int]]:
        """ReplicationControlManager.electLeaders(PREFERRED): the partitions whose leader moves."""
        if not self.is_active():
            return []
        changes = []
        for name, p in partitions:
            partition = self.image.partition(name, p)
            if partition is None:
                continue
            election = preferred_election(partition, self._acceptable)
            record, election = build_change(self.image.topics[name].topic_id, p, partition, list(partition.isr),
                                            self._acceptable, False, election=election)
            if record is not None:
                changes.append((name, p, record, election, [partition.leader, *partition.isr]))
        if changes:
            self._write_replayed([], changes, lambda: self._announce_changes(changes, reason))
        return [(n, p) for n, p, *_ in changes]


