"""The group coordinator: one per broker, for the groups whose `__consumer_offsets` partition it leads.

A group's coordinator is the leader of partition `coordinator_partition(group, n)` of
`__consumer_offsets`. Each broker owns one (`broker.groups`, built anew at each start: a restarted
broker remembers nothing) and tells it when a replica's role changes (`on_role_change`, as
ReplicaManager tells GroupCoordinator.onElection/onResignation): on becoming leader of a partition
the coordinator *loads* it — replays its log, group metadata and committed offsets, tombstones
included — and from then on answers for its groups; on losing it, it drops them (their members
get NOT_COORDINATOR, find the new coordinator and carry on from the log). It knows its broker only
as a BrokerContext (engine/node.py) and reads the topic from the metadata store.

It answers JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit and OffsetFetch (the broker
answers FindCoordinator itself) with Kafka's classic-protocol rules (GroupMetadataManager):
- a new member first gets MEMBER_ID_REQUIRED and an id `clientId-<uuid>` (KIP-394); a new group
  waits `group.initial.rebalance.delay.ms` (extended while members keep arriving, up to the
  rebalance timeout); later join phases end when every member has rejoined, or after the
  rebalance timeout (the members' largest max.poll.interval.ms), removing those that did not;
- the leader's SyncGroup carries everyone's assignment; it is written to the log (acks=all,
  `offsets.commit.timeout.ms`) before anyone gets an answer and the group is Stable;
- a member missing heartbeats for `session.timeout.ms` is removed (unless it is parked in a
  JoinGroup/SyncGroup), and so is one that does not send SyncGroup within the rebalance timeout;
- offsets are committed through the partition leader's normal append and acknowledged once the
  high watermark passes them; a commit from an old generation gets ILLEGAL_GENERATION.
Timers run on the broker's incarnation: a crashed broker's coordinator never acts again.
"""
from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine import events as ev
from engine.common.errors import Errors
from engine.groups import group as g
from engine.groups import offsets_topic as ot
from engine.groups.consumer_protocol import decode_assignment
from engine.groups.coordinator_partition import coordinator_partition
from engine.groups.protocol import (
    UNKNOWN_MEMBER_ID,
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupMember,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupMemberResponse,
    LeaveGroupRequest,
    LeaveGroupResponse,
    OffsetCommitPartitionResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchPartition,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from engine.storage import record_batch as rb

if TYPE_CHECKING:
    from engine.node import BrokerContext, PartitionView
    from engine.sim.scheduler import Scheduled

# The broker's request handlers: (client node, request, respond(body, summary)).
RequestHandler = Callable[[str, Any, Callable[..., None]], None]

NEW_MEMBER_JOIN_TIMEOUT_MS = 300_000    # group.classic... new member join timeout (5 minutes)
OFFSET_METADATA_MAX_BYTES = 4096        # offset.metadata.max.bytes

# What an append error means to a group client (appendGroupMetadataErrorToResponseError).
APPEND_ERRORS: dict[str, str] = {
    Errors.UNKNOWN_TOPIC_OR_PARTITION: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.REQUEST_TIMED_OUT: Errors.COORDINATOR_NOT_AVAILABLE,
    Errors.NOT_LEADER_OR_FOLLOWER: Errors.NOT_COORDINATOR,
    Errors.KAFKA_STORAGE_ERROR: Errors.NOT_COORDINATOR,
    Errors.MESSAGE_TOO_LARGE: Errors.UNKNOWN_SERVER_ERROR,
}


@dataclass(frozen=True)
class OffsetAndMetadata:
    offset: int
    leader_epoch: int = -1
    metadata: str = ""
    commit_timestamp: int = -1


# One seeded stream for the whole cluster, whichever broker draws (a name of the world's, engine/node.py).
MEMBER_ID_STREAM = "group-coordinator-member-ids"


def coordinator_for(broker: Any) -> GroupCoordinator:
    """The broker's coordinator of its current incarnation (`broker.groups`)."""
    return broker.groups


def _tp(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


class GroupCoordinator:
    def __init__(self, broker: BrokerContext) -> None:
        self.broker = broker
        self.incarnation = broker.incarnation
        self.groups: dict[str, g.ClassicGroup] = {}
        self.offsets: dict[str, dict[tuple[str, int], OffsetAndMetadata]] = {}
        self.loaded: set[int] = set()
        self._timers: dict[str, Scheduled] = {}

    # -- plumbing ---------------------------------------------------------------------------
    @property
    def config(self) -> Any:
        return self.broker.config

    @property
    def now_ms(self) -> int:
        return self.broker.now_ms

    def _current(self) -> bool:
        return self.broker.alive and self.broker.incarnation == self.incarnation

    def partition_for(self, group_id: str) -> int:
        return coordinator_partition(group_id, self.broker.metadata.partition_count(ot.OFFSETS_TOPIC))

    def owns(self, group_id: str) -> str | None:
        """None if this broker coordinates `group_id` now, else the error a client gets."""
        if not self._current() or not self.broker.metadata.topic_exists(ot.OFFSETS_TOPIC):
            return Errors.NOT_COORDINATOR
        return None if self.partition_for(group_id) in self.loaded else Errors.NOT_COORDINATOR

    def _schedule(self, key: str, delay_ms: int, action: Callable[[], None], *, foreground: bool) -> None:
        """Kafka's coordinator timer: one pending action per key; scheduling a key replaces it."""
        self._cancel(key)

        def run() -> None:
            self._timers.pop(key, None)
            action()
        self._timers[key] = self.broker.schedule(delay_ms, run, f"group coordinator {key}", foreground=foreground)

    def _cancel(self, key: str) -> None:
        self.broker.cancel(self._timers.pop(key, None))

    def rebalance_deadline_ms(self, group_id: str) -> int | None:
        """When the group's running join or sync phase ends at the latest (its timer's due time)."""
        for key in (_join_key(group_id), _sync_key(group_id)):
            entry = self._timers.get(key)
            if entry is not None and not entry.cancelled:
                return entry.time_ms
        return None

    def _member_id(self, client_id: str) -> str:
        rng = self.broker.stream(MEMBER_ID_STREAM)
        return f"{client_id}-{uuid.UUID(int=rng.getrandbits(128), version=4)}"

    def _publish_state(self, group: g.ClassicGroup, previous: str, reason: str) -> None:
        self.broker.publish(ev.GroupStateChanged(
            group=group.group_id, coordinator=self.broker.id, state=group.state, previous_state=previous,
            generation=group.generation, protocol=group.protocol_name, leader=group.leader_id,
            members=[m.member_id for m in group.members_in_order()], reason=reason))

    def _transition(self, group: g.ClassicGroup, state: str, reason: str) -> None:
        previous = group.state
        group.transition_to(state, self.now_ms)
        self._publish_state(group, previous, reason)

    def _removed(self, group: g.ClassicGroup, member_id: str, client_id: str, reason: str) -> None:
        self._cancel(_heartbeat_key(group.group_id, member_id))
        self.broker.publish(ev.MemberRemoved(group=group.group_id, coordinator=self.broker.id,
                                             member_id=member_id, client_id=client_id, reason=reason))

    # -- loading and unloading (leadership of __consumer_offsets partitions) ----------------
    def on_role_change(self, partition: PartitionView, previous_role: str) -> None:
        """A replica on this broker became leader or follower, or stopped being either (its broker
        calls this for every replica whose role changed)."""
        if partition.topic != ot.OFFSETS_TOPIC:
            return
        if partition.role == "leader" and previous_role != "leader":
            self.load(partition)
        elif previous_role == "leader" and partition.role != "leader":
            # On a crash this is the coordinator of the incarnation that just ended: its groups go
            # Dead (an event for the browser); it can no longer answer anyone.
            self.unload(partition.partition)

    def load(self, partition: PartitionView) -> None:
        """Replay the partition's log: the groups and committed offsets it holds become ours.

        As GroupMetadataManager.loadGroupsAndOffsets: a record whose key version is unknown is
        skipped ("It could be a left over from an aborted upgrade"); a record it cannot read at
        all (no key, truncated bytes, an unknown value version) ends the load, whose error Kafka
        logs — the partition is still ours, with nothing loaded from it. Never an exception."""
        records = partition.log.records_from(partition.log.log_start_offset)
        try:
            values, offsets = _replay(records)
        except ValueError:
            values, offsets = {}, {}
        for group_id, per_group in offsets.items():
            if per_group:
                self.offsets[group_id] = per_group
        for group_id, value in values.items():
            if value is not None:
                self.groups[group_id] = self._loaded_group(group_id, value)
        self.loaded.add(partition.partition)
        if records:     # an empty partition has nothing to show
            self.broker.publish(ev.CoordinatorLoaded(
                broker=self.broker.id, partition=partition.partition,
                groups=sorted(gid for gid, v in values.items() if v is not None),
                offsets=sum(len(o) for o in offsets.values()), records=len(records)))

    def _loaded_group(self, group_id: str, value: ot.GroupMetadataValue) -> g.ClassicGroup:
        group = g.ClassicGroup(group_id, state=g.STABLE if value.members else g.EMPTY,
                               state_timestamp=value.current_state_timestamp,
                               protocol_type=value.protocol_type or None, protocol_name=value.protocol,
                               generation=value.generation, leader_id=value.leader)
        for m in value.members:
            member = g.GroupMember(m.member_id, m.client_id, m.client_host, m.rebalance_timeout, m.session_timeout,
                                   value.protocol_type, [(value.protocol or "", m.subscription)], m.group_instance_id,
                                   assignment=m.assignment)
            group.add(member)
            self._reschedule_heartbeat(group, member, member.session_timeout_ms)
        return group

    def unload(self, partition: int) -> None:
        self.loaded.discard(partition)
        gone = sorted(gid for gid in self.groups if self.partition_for(gid) == partition)
        for group_id in gone:
            group = self.groups.pop(group_id)
            for member in group.members_in_order():
                self._complete_join(member, JoinGroupResponse(Errors.NOT_COORDINATOR, member.member_id))
                self._complete_sync(member, SyncGroupResponse(Errors.NOT_COORDINATOR))
                self._cancel(_heartbeat_key(group_id, member.member_id))
            for pending in group.pending_join_members:
                self._cancel(_heartbeat_key(group_id, pending))
            self._cancel(_join_key(group_id))
            self._cancel(_sync_key(group_id))
            self._transition(group, g.DEAD, f"coordinator on broker {self.broker.id} no longer leads "
                                            f"{ot.OFFSETS_TOPIC}-{partition}")
        for group_id in [gid for gid in self.offsets if self.partition_for(gid) == partition]:
            del self.offsets[group_id]
        if gone:
            self.broker.publish(ev.CoordinatorUnloaded(broker=self.broker.id, partition=partition, groups=gone))

    # -- JoinGroup --------------------------------------------------------------------------
    def handle_join(self, src: str, request: JoinGroupRequest, reply: Callable[[object], None]) -> None:
        error = self.owns(request.group_id)
        if error is None and not (self.config.group_min_session_timeout_ms <= request.session_timeout_ms
                                  <= self.config.group_max_session_timeout_ms):
            error = Errors.INVALID_SESSION_TIMEOUT
        group = self.groups.get(request.group_id)
        new_member = request.member_id == UNKNOWN_MEMBER_ID
        if error is None and group is None and not new_member:
            error = Errors.UNKNOWN_MEMBER_ID
        if error is not None:
            reply(JoinGroupResponse(error, request.member_id))
            return
        if group is None:
            group = self.groups[request.group_id] = g.ClassicGroup(request.group_id, state_timestamp=self.now_ms)
        if new_member:
            self._join_new_member(src, request, group, reply)
        else:
            self._join_existing_member(src, request, group, reply)

    def _join_new_member(self, src: str, request: JoinGroupRequest, group: g.ClassicGroup, reply) -> None:
        if group.state == g.DEAD:
            reply(JoinGroupResponse(Errors.COORDINATOR_NOT_AVAILABLE))
        elif not group.supports_protocols(request.protocol_type, [p.name for p in request.protocols]):
            reply(JoinGroupResponse(Errors.INCONSISTENT_GROUP_PROTOCOL))
        else:
            # KIP-394: hand out the id and ask the member to come back with it. The pending id
            # expires like a member that stopped heartbeating if it never does.
            member_id = self._member_id(request.client_id)
            group.add_pending_member(member_id)
            self._schedule(_heartbeat_key(group.group_id, member_id), request.session_timeout_ms,
                           lambda: self._expire_heartbeat(group.group_id, member_id, request.session_timeout_ms),
                           foreground=False)
            reply(JoinGroupResponse(Errors.MEMBER_ID_REQUIRED, member_id))

    def _join_existing_member(self, src: str, request: JoinGroupRequest, group: g.ClassicGroup, reply) -> None:
        member_id = request.member_id
        protocols = [(p.name, p.metadata) for p in request.protocols]
        if group.state == g.DEAD:
            reply(JoinGroupResponse(Errors.COORDINATOR_NOT_AVAILABLE, member_id))
        elif not group.supports_protocols(request.protocol_type, [name for name, _ in protocols]):
            reply(JoinGroupResponse(Errors.INCONSISTENT_GROUP_PROTOCOL, member_id))
        elif member_id in group.pending_join_members:
            self._add_member_and_rebalance(src, request, group, reply)
        elif group.validate_member(member_id):
            reply(JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID, member_id))
        else:
            member = group.members[member_id]
            if group.state == g.PREPARING_REBALANCE:
                self._update_member_and_rebalance(request, group, member, f"member {member_id} rejoined", reply)
            elif group.state == g.COMPLETING_REBALANCE:
                if member.matches(protocols):
                    reply(self._current_generation_answer(group, member_id))  # it lost its answer
                else:
                    self._update_member_and_rebalance(request, group, member,
                                                      f"member {member_id} changed its subscription", reply)
            elif group.state == g.STABLE:
                if group.is_leader(member_id):
                    # The leader rejoins to make the group rebalance on metadata changes the
                    # coordinator cannot see (a topic gained partitions, a new topic matches).
                    self._update_member_and_rebalance(request, group, member,
                                                      f"leader {member_id} rejoined", reply)
                elif not member.matches(protocols):
                    self._update_member_and_rebalance(request, group, member,
                                                      f"member {member_id} changed its subscription", reply)
                else:
                    reply(self._current_generation_answer(group, member_id))
            else:
                reply(JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID, member_id))

    def _current_generation_answer(self, group: g.ClassicGroup, member_id: str) -> JoinGroupResponse:
        members = self._join_members(group) if group.is_leader(member_id) else []
        return JoinGroupResponse(Errors.NONE, member_id, group.generation, group.protocol_type, group.protocol_name,
                                 group.leader_id or "", members)

    def _join_members(self, group: g.ClassicGroup) -> list[JoinGroupMember]:
        return [JoinGroupMember(m.member_id, m.metadata(group.protocol_name), m.group_instance_id)
                for m in group.members_in_order()]

    def _add_member_and_rebalance(self, src: str, request: JoinGroupRequest, group: g.ClassicGroup, reply) -> None:
        protocols = [(p.name, p.metadata) for p in request.protocols]
        member = g.GroupMember(request.member_id, request.client_id, f"/{src}", request.rebalance_timeout_ms,
                               request.session_timeout_ms, request.protocol_type, protocols,
                               request.group_instance_id, is_new=True)
        if group.state == g.PREPARING_REBALANCE and group.previous_state == g.EMPTY:
            group.new_member_added = True      # the initial rebalance waits a little longer
        member.awaiting_join = reply
        group.add(member)
        self.broker.publish(ev.MemberJoined(group=group.group_id, coordinator=self.broker.id,
                                            member_id=member.member_id, client_id=member.client_id,
                                            protocols=member.protocol_names()))
        self._reschedule_heartbeat(group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
        self._maybe_prepare_rebalance_or_complete_join(group, f"new member {member.member_id} joined")

    def _update_member_and_rebalance(self, request: JoinGroupRequest, group: g.ClassicGroup,
                                     member: g.GroupMember, reason: str, reply) -> None:
        member.protocols = [(p.name, p.metadata) for p in request.protocols]
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
        member.session_timeout_ms = request.session_timeout_ms
        member.awaiting_join = reply
        self.broker.publish(ev.MemberJoined(group=group.group_id, coordinator=self.broker.id,
                                            member_id=member.member_id, client_id=member.client_id,
                                            protocols=member.protocol_names(), rejoined=True))
        self._maybe_prepare_rebalance_or_complete_join(group, reason)

    # -- the join phase ---------------------------------------------------------------------
    def _maybe_prepare_rebalance_or_complete_join(self, group: g.ClassicGroup, reason: str) -> None:
        if group.can_rebalance():
            self._prepare_rebalance(group, reason)
        elif group.state == g.PREPARING_REBALANCE and group.previous_state != g.EMPTY \
                and group.has_all_members_joined():
            self._complete_join_phase(group)

    def _prepare_rebalance(self, group: g.ClassicGroup, reason: str) -> None:
        if group.state == g.COMPLETING_REBALANCE:
            self._reset_and_propagate_assignment(group, Errors.REBALANCE_IN_PROGRESS)
        self._remove_sync_expiration(group)
        initial = group.state == g.EMPTY
        if initial:
            delay = self.config.group_initial_rebalance_delay_ms
            remaining = max(group.rebalance_timeout_ms() - delay, 0)
            self._schedule(_join_key(group.group_id), delay,
                           lambda: self._try_complete_initial_rebalance(group.group_id, delay, remaining),
                           foreground=True)
        self.broker.publish(ev.RebalanceStarted(group=group.group_id, coordinator=self.broker.id,
                                                generation=group.generation, reason=reason))
        self._transition(group, g.PREPARING_REBALANCE, reason)
        if not initial:
            if group.has_all_members_joined():
                self._complete_join_phase(group)
            else:
                self._schedule(_join_key(group.group_id), group.rebalance_timeout_ms(),
                               lambda: self._complete_join_phase_of(group.group_id), foreground=True)

    def _try_complete_initial_rebalance(self, group_id: str, delay: int, remaining: int) -> None:
        group = self.groups.get(group_id)
        if group is None:
            return
        if group.new_member_added and remaining != 0:
            group.new_member_added = False
            next_delay = min(self.config.group_initial_rebalance_delay_ms, remaining)
            next_remaining = max(remaining - delay, 0)
            self._schedule(_join_key(group_id), next_delay,
                           lambda: self._try_complete_initial_rebalance(group_id, next_delay, next_remaining),
                           foreground=True)
        else:
            self._complete_join_phase(group)

    def _complete_join_phase_of(self, group_id: str) -> None:
        group = self.groups.get(group_id)
        if group is not None:
            self._complete_join_phase(group)

    def _complete_join_phase(self, group: g.ClassicGroup) -> None:
        """Drop who did not rejoin, start the next generation, answer every parked JoinGroup."""
        self._cancel(_join_key(group.group_id))
        for member in group.not_yet_rejoined():
            if member.group_instance_id is None:
                group.remove(member.member_id)
                self._removed(group, member.member_id, member.client_id,
                              f"did not rejoin within the rebalance timeout ({member.rebalance_timeout_ms} ms)")
        if group.state == g.DEAD:
            return
        if not group.maybe_elect_new_joined_leader() and group.members:
            self._schedule(_join_key(group.group_id), group.rebalance_timeout_ms(),
                           lambda: self._complete_join_phase_of(group.group_id), foreground=True)
            return
        previous = group.state
        group.init_next_generation(self.now_ms)
        self._publish_state(group, previous, "join phase completed")
        if group.state == g.EMPTY:
            self._store_group(group, {}, lambda error: None)
            return
        members = self._join_members(group)
        for member in group.members_in_order():
            self._complete_join(member, JoinGroupResponse(
                Errors.NONE, member.member_id, group.generation, group.protocol_type, group.protocol_name,
                group.leader_id or "", members if group.is_leader(member.member_id) else []))
            self._reschedule_heartbeat(group, member, member.session_timeout_ms)
            member.is_new = False
            group.pending_sync_members.add(member.member_id)
        generation = group.generation
        self._schedule(_sync_key(group.group_id), group.rebalance_timeout_ms(),
                       lambda: self._expire_pending_sync(group.group_id, generation), foreground=True)

    def _expire_pending_sync(self, group_id: str, generation: int) -> None:
        group = self.groups.get(group_id)
        if group is None or group.generation != generation or not group.pending_sync_members:
            return
        if group.state not in (g.COMPLETING_REBALANCE, g.STABLE):
            return
        for member_id in sorted(group.pending_sync_members):
            member = group.remove(member_id)
            if member is not None:
                self._removed(group, member_id, member.client_id,
                              f"did not send SyncGroup within the rebalance timeout ({member.rebalance_timeout_ms} ms)")
        self._prepare_rebalance(group, "members did not sync in time")

    def _remove_sync_expiration(self, group: g.ClassicGroup) -> None:
        group.pending_sync_members.clear()
        self._cancel(_sync_key(group.group_id))

    @staticmethod
    def _complete_join(member: g.GroupMember, response: JoinGroupResponse) -> None:
        if member.awaiting_join is not None:
            callback, member.awaiting_join = member.awaiting_join, None
            callback(response)

    @staticmethod
    def _complete_sync(member: g.GroupMember, response: SyncGroupResponse) -> None:
        if member.awaiting_sync is not None:
            callback, member.awaiting_sync = member.awaiting_sync, None
            callback(response)

    # -- SyncGroup --------------------------------------------------------------------------
    def handle_sync(self, src: str, request: SyncGroupRequest, reply: Callable[[object], None]) -> None:
        error = self.owns(request.group_id)
        group = self.groups.get(request.group_id)
        if error is None:
            if group is None:
                error = Errors.UNKNOWN_MEMBER_ID
            else:
                error = self._validate_sync(group, request)
                if error is None and group.state == g.EMPTY:
                    error = Errors.UNKNOWN_MEMBER_ID
                if error is None and group.state == g.PREPARING_REBALANCE:
                    error = Errors.REBALANCE_IN_PROGRESS
        if error is not None:
            reply(SyncGroupResponse(error))
            return
        assert group is not None    # no error means the group exists (UNKNOWN_MEMBER_ID above otherwise)
        member = group.members[request.member_id]
        if group.state == g.STABLE:
            self._remove_pending_sync_member(group, member.member_id)
            reply(SyncGroupResponse(Errors.NONE, group.protocol_type, group.protocol_name, member.assignment))
            return
        member.awaiting_sync = reply
        self._remove_pending_sync_member(group, member.member_id)
        if group.is_leader(member.member_id):
            assignment = {a.member_id: a.assignment for a in request.assignments}
            for member_id in group.members:
                assignment.setdefault(member_id, b"")
            generation = request.generation_id

            def stored(append_error: str) -> None:
                if self.groups.get(group.group_id) is not group or group.state != g.COMPLETING_REBALANCE \
                        or group.generation != generation:
                    return  # the group moved on while the assignment was being written
                if append_error != Errors.NONE:
                    self._reset_and_propagate_assignment(group, append_error)
                    self._maybe_prepare_rebalance_or_complete_join(
                        group, f"error {append_error} when storing the assignment")
                    return
                for m in group.members.values():
                    m.assignment = assignment.get(m.member_id, b"")
                self._propagate_assignment(group, Errors.NONE)
                self._transition(group, g.STABLE, "the leader's assignment is stored")
                self.broker.publish(ev.RebalanceCompleted(
                    group=group.group_id, coordinator=self.broker.id, generation=group.generation,
                    leader=group.leader_id or "", protocol=group.protocol_name or "",
                    assignment={m.member_id: [str(tp) for tp in decode_assignment(m.assignment)]
                                for m in group.members_in_order()}))
            self._store_group(group, assignment, stored)

    def _validate_sync(self, group: g.ClassicGroup, request: SyncGroupRequest) -> str | None:
        if group.state == g.DEAD:
            return Errors.COORDINATOR_NOT_AVAILABLE
        error = group.validate_member(request.member_id)
        if error:
            return error
        if request.generation_id != group.generation:
            return Errors.ILLEGAL_GENERATION
        if (request.protocol_type is not None and request.protocol_type != group.protocol_type) or \
                (request.protocol_name is not None and request.protocol_name != group.protocol_name):
            return Errors.INCONSISTENT_GROUP_PROTOCOL
        return None

    def _remove_pending_sync_member(self, group: g.ClassicGroup, member_id: str) -> None:
        group.pending_sync_members.discard(member_id)
        if not group.pending_sync_members:
            self._cancel(_sync_key(group.group_id))

    def _reset_and_propagate_assignment(self, group: g.ClassicGroup, error: str) -> None:
        for member in group.members.values():
            member.assignment = b""
        self._propagate_assignment(group, error)

    def _propagate_assignment(self, group: g.ClassicGroup, error: str) -> None:
        ok = error == Errors.NONE
        for member in group.members_in_order():
            if member.awaiting_sync is not None:
                self._complete_sync(member, SyncGroupResponse(error, group.protocol_type if ok else None,
                                                              group.protocol_name if ok else None, member.assignment))
                self._reschedule_heartbeat(group, member, member.session_timeout_ms)

    # -- Heartbeat and session expiry -------------------------------------------------------
    def handle_heartbeat(self, src: str, request: HeartbeatRequest, reply: Callable[[object], None]) -> None:
        error = self.owns(request.group_id)
        group = self.groups.get(request.group_id)
        if error is None:
            if group is None:
                error = Errors.UNKNOWN_MEMBER_ID
            elif group.state == g.DEAD:
                error = Errors.COORDINATOR_NOT_AVAILABLE
            else:
                error = group.validate_member(request.member_id)
                if error is None and request.generation_id != group.generation:
                    error = Errors.ILLEGAL_GENERATION
                if error is None:
                    member = group.members[request.member_id]
                    self._reschedule_heartbeat(group, member, member.session_timeout_ms)
                    error = Errors.REBALANCE_IN_PROGRESS if group.state == g.PREPARING_REBALANCE else Errors.NONE
        reply(HeartbeatResponse(error))

    def _reschedule_heartbeat(self, group: g.ClassicGroup, member: g.GroupMember, timeout_ms: int) -> None:
        group_id, member_id = group.group_id, member.member_id
        self._schedule(_heartbeat_key(group_id, member_id), timeout_ms,
                       lambda: self._expire_heartbeat(group_id, member_id, timeout_ms), foreground=False)

    def _expire_heartbeat(self, group_id: str, member_id: str, timeout_ms: int) -> None:
        group = self.groups.get(group_id)
        if group is None or group.state == g.DEAD:
            return
        if member_id in group.pending_join_members:
            group.remove(member_id)
            self._removed(group, member_id, "", f"never came back with its member id within {timeout_ms} ms")
            if group.state == g.PREPARING_REBALANCE and group.has_all_members_joined():
                self._complete_join_phase(group)
            return
        member = group.members.get(member_id)
        if member is not None and not member.has_satisfied_heartbeat():
            self._remove_member_and_update_group(group, member, f"session timeout ({timeout_ms} ms) expired "
                                                                f"without a heartbeat")

    def _remove_member_and_update_group(self, group: g.ClassicGroup, member: g.GroupMember, reason: str) -> None:
        self._complete_join(member, JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID, UNKNOWN_MEMBER_ID))
        group.remove(member.member_id)
        self._removed(group, member.member_id, member.client_id, reason)
        if group.state in (g.STABLE, g.COMPLETING_REBALANCE):
            self._maybe_prepare_rebalance_or_complete_join(group, reason)
        elif group.state == g.PREPARING_REBALANCE and group.has_all_members_joined():
            self._complete_join_phase(group)

    # -- LeaveGroup -------------------------------------------------------------------------
    def handle_leave(self, src: str, request: LeaveGroupRequest, reply: Callable[[object], None]) -> None:
        error = self.owns(request.group_id)
        group = self.groups.get(request.group_id)
        if error is None and group is not None and group.state == g.DEAD:
            error = Errors.COORDINATOR_NOT_AVAILABLE
        if error is not None:
            reply(LeaveGroupResponse(error))
            return
        answers, left = [], []
        for identity in request.members:
            member_id = identity.member_id
            reason = f"left the group: {identity.reason or 'not provided'}"
            if group is None:
                answers.append(LeaveGroupMemberResponse(member_id, Errors.UNKNOWN_MEMBER_ID))
            elif member_id in group.pending_join_members:
                group.remove(member_id)
                self._removed(group, member_id, "", reason)
                answers.append(LeaveGroupMemberResponse(member_id, Errors.NONE))
            elif group.validate_member(member_id):
                answers.append(LeaveGroupMemberResponse(member_id, Errors.UNKNOWN_MEMBER_ID))
            else:
                member = group.members[member_id]
                self._complete_join(member, JoinGroupResponse(Errors.UNKNOWN_MEMBER_ID, UNKNOWN_MEMBER_ID))
                group.remove(member_id)
                self._removed(group, member_id, member.client_id, reason)
                answers.append(LeaveGroupMemberResponse(member_id, Errors.NONE))
                left.append(member_id)
        if left and group is not None:  # members only leave an existing group
            self._maybe_prepare_rebalance_or_complete_join(group, f"member(s) {', '.join(left)} left the group")
        reply(LeaveGroupResponse(Errors.NONE, answers))

    # -- OffsetCommit and OffsetFetch -------------------------------------------------------
    def handle_offset_commit(self, src: str, request: OffsetCommitRequest, reply: Callable[[object], None]) -> None:
        group_id = request.group_id
        error = self.owns(group_id)
        group = self.groups.get(group_id)
        if error is None and group is None:
            if request.generation_id < 0:   # a consumer using assign(): a "simple" group is created
                group = self.groups[group_id] = g.ClassicGroup(group_id, state_timestamp=self.now_ms)
            else:
                error = Errors.ILLEGAL_GENERATION
        if error is None and group is not None:     # no error means the group exists (or was just created)
            error = group.validate_offset_commit(request.member_id, request.generation_id)
        if error is not None:
            reply(OffsetCommitResponse([OffsetCommitPartitionResponse(p.topic, p.partition, error)
                                        for p in request.partitions]))
            return
        now = self.broker.record_time_ms()
        too_large = {(p.topic, p.partition) for p in request.partitions
                     if len(p.committed_metadata.encode("utf-8")) > OFFSET_METADATA_MAX_BYTES}
        accepted = [p for p in request.partitions if (p.topic, p.partition) not in too_large]
        records = [ot.offset_commit_record(group_id, p.topic, p.partition, p.committed_offset,
                                           leader_epoch=p.committed_leader_epoch, metadata=p.committed_metadata,
                                           commit_timestamp=now) for p in accepted]

        def stored(append_error: str) -> None:
            if append_error == Errors.NONE and accepted:
                per_group = self.offsets.setdefault(group_id, {})
                for p in accepted:
                    per_group[(p.topic, p.partition)] = OffsetAndMetadata(
                        p.committed_offset, p.committed_leader_epoch, p.committed_metadata, now)
                self.broker.publish(ev.OffsetsCommitted(
                    group=group_id, coordinator=self.broker.id, member_id=request.member_id,
                    generation=request.generation_id,
                    offsets={_tp(p.topic, p.partition): p.committed_offset for p in accepted}))
            reply(OffsetCommitResponse([
                OffsetCommitPartitionResponse(p.topic, p.partition, Errors.OFFSET_METADATA_TOO_LARGE
                                              if (p.topic, p.partition) in too_large else append_error)
                for p in request.partitions]))
        if not records:
            stored(Errors.NONE)
        else:
            self._append(group_id, records, stored)

    def handle_offset_fetch(self, src: str, request: OffsetFetchRequest, reply: Callable[[object], None]) -> None:
        error = self.owns(request.group_id)
        if error is not None:
            reply(OffsetFetchResponse(error))
            return
        committed = self.offsets.get(request.group_id, {})
        wanted = request.partitions if request.partitions is not None else sorted(committed)
        out = []
        for topic, partition in wanted:
            found = committed.get((topic, partition))
            out.append(OffsetFetchPartition(topic, partition, found.offset, found.leader_epoch, found.metadata)
                       if found else OffsetFetchPartition(topic, partition, -1))
        reply(OffsetFetchResponse(Errors.NONE, out))

    def committed(self, group_id: str) -> dict[tuple[str, int], OffsetAndMetadata]:
        return dict(self.offsets.get(group_id, {}))

    # -- the log ----------------------------------------------------------------------------
    def _store_group(self, group: g.ClassicGroup, assignment: dict[str, bytes],
                     on_done: Callable[[str], None]) -> None:
        members = [ot.MemberMetadata(m.member_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                                     m.session_timeout_ms, m.metadata(group.protocol_name),
                                     assignment.get(m.member_id, b""), m.group_instance_id)
                   for m in group.members_in_order()]
        value = ot.GroupMetadataValue(group.protocol_type or "", group.generation, group.protocol_name,
                                      group.leader_id, group.state_timestamp, members)
        self._append(group.group_id, [ot.group_record(group.group_id, value)], on_done)

    def _append(self, group_id: str, records: Sequence[tuple[bytes, bytes | None]],
                on_done: Callable[[str], None]) -> None:
        """Append through the partition leader, acks=all: `on_done(error)` once the HW passes it."""
        p = self.partition_for(group_id)
        partition: PartitionView | None = self.broker.partitions.get((ot.OFFSETS_TOPIC, p))
        if partition is None or partition.role != "leader":
            on_done(Errors.NOT_COORDINATOR)
            return
        batch = rb.encode_batch(records, base_timestamp=self.broker.record_time_ms())
        result = partition.append_as_leader(batch, -1)
        if result.error != Errors.NONE:
            on_done(APPEND_ERRORS.get(result.error, result.error))
            return
        self.broker.complete_delayed_fetches(ot.OFFSETS_TOPIC, p)  # followers parked in a long poll get them now
        partition.wait_for_acks(result, lambda error, _base: on_done(APPEND_ERRORS.get(error, error)),
                                self.config.offsets_commit_timeout_ms)


def _replay(records: list) -> tuple[dict[str, ot.GroupMetadataValue | None],
                                   dict[str, dict[tuple[str, int], OffsetAndMetadata]]]:
    """The groups and offsets a __consumer_offsets log holds, tombstones applied (doLoadGroupsAndOffsets).
    ValueError for a record that cannot be read; a key of unknown version is skipped."""
    values: dict[str, ot.GroupMetadataValue | None] = {}
    offsets: dict[str, dict[tuple[str, int], OffsetAndMetadata]] = {}
    for record in records:
        if record.key is None:   # Kafka: require(record.hasKey, ...)
            raise ValueError(f"Group metadata/offset entry key should not be null (offset {record.offset})")
        try:
            key = ot.decode_key(record.key)
        except ot.UnknownKeyVersionError:
            continue
        if isinstance(key, ot.OffsetCommitKey):
            commit = ot.decode_value(key, record.value)
            per_group = offsets.setdefault(key.group, {})
            if commit is None:
                per_group.pop((key.topic, key.partition), None)
            else:
                per_group[(key.topic, key.partition)] = OffsetAndMetadata(
                    commit.offset, commit.leader_epoch, commit.metadata, commit.commit_timestamp)
        else:
            values[key.group] = ot.decode_value(key, record.value)
    return values, offsets


def _heartbeat_key(group_id: str, member_id: str) -> str:
    return f"heartbeat-{group_id}-{member_id}"


def _join_key(group_id: str) -> str:
    return f"join-{group_id}"


def _sync_key(group_id: str) -> str:
    return f"sync-{group_id}"


# -- wiring into the broker ------------------------------------------------------------------------
def response_summary(body: object) -> dict:
    """What the event log shows of a group response."""
    out = {"error": getattr(body, "error", Errors.NONE)}
    for name in ("member_id", "generation_id", "leader", "protocol_name", "node_id"):
        value = getattr(body, name, None)
        if value not in (None, ""):
            out[name] = value
    if isinstance(body, JoinGroupResponse) and body.members:
        out["members"] = [m.member_id for m in body.members]
    if isinstance(body, SyncGroupResponse) and body.assignment:
        out["assignment"] = [str(tp) for tp in decode_assignment(body.assignment)]
    if isinstance(body, OffsetCommitResponse):
        out["error"] = body.error
    return out


def _answering(coordinator: GroupCoordinator, handle: Callable[[str, Any, Callable[[object], None]], None]
               ) -> RequestHandler:
    """`handle` as a broker request handler: its answer goes out, with its summary, only while the
    coordinator's broker incarnation runs (a crash silences answers still being worked out)."""
    def handler(src: str, request: object, respond: Callable[..., None]) -> None:
        def reply(body: object) -> None:
            if coordinator._current():
                respond(body, response_summary(body))
        handle(src, request, reply)
    return handler


def request_handlers(coordinator: GroupCoordinator) -> dict[type, RequestHandler]:
    """The group requests the coordinator answers, for its broker's handler table."""
    return {JoinGroupRequest: _answering(coordinator, coordinator.handle_join),
            SyncGroupRequest: _answering(coordinator, coordinator.handle_sync),
            HeartbeatRequest: _answering(coordinator, coordinator.handle_heartbeat),
            LeaveGroupRequest: _answering(coordinator, coordinator.handle_leave),
            OffsetCommitRequest: _answering(coordinator, coordinator.handle_offset_commit),
            OffsetFetchRequest: _answering(coordinator, coordinator.handle_offset_fetch)}
