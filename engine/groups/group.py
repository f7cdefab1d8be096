"""One consumer group as the coordinator holds it: Kafka's classic group state machine.

    Empty ──join──▶ PreparingRebalance ──all rejoined / rebalance timeout──▶ CompletingRebalance
      ▲                 ▲       ▲                                                  │
      │                 │       └──────── a member joins, leaves or expires ───────┤
      └── last member ──┘                                                          ▼
          leaves              Stable ◀──────────── the leader's SyncGroup ─────────┘
    Dead: the group is gone from this coordinator (moved, or deleted).

Each state says which previous states may lead to it (ClassicGroupState.validPreviousStates);
any other transition is a bug and raises. This module holds state only — the coordinator
(coordinator.py) owns the timers, the log and the answers. What it keeps, as Kafka's ClassicGroup:
- members in a Java HashMap's iteration order (the leader's member list and a new leader after
  the old one leaves are taken in that order);
- the leader is the first member added; `generation` grows by one per completed join phase;
- members waiting for their JoinGroup answer (`awaiting_join`) or SyncGroup answer (`awaiting_sync`)
  hold a callback; the join phase is over once every member is waiting and no id handed out by
  MEMBER_ID_REQUIRED is still pending (`has_all_members_joined`);
- the protocol is the assignor every member supports with the most first-choice votes.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from engine.common.errors import Errors
from engine.common.hashing import JavaHashSetOrder, java_hashmap_order, java_string_hashcode

EMPTY = "Empty"
PREPARING_REBALANCE = "PreparingRebalance"
COMPLETING_REBALANCE = "CompletingRebalance"
STABLE = "Stable"
DEAD = "Dead"

VALID_PREVIOUS_STATES = {
    EMPTY: {PREPARING_REBALANCE},
    PREPARING_REBALANCE: {STABLE, COMPLETING_REBALANCE, EMPTY},
    COMPLETING_REBALANCE: {PREPARING_REBALANCE},
    STABLE: {COMPLETING_REBALANCE},
    DEAD: {STABLE, PREPARING_REBALANCE, COMPLETING_REBALANCE, EMPTY, DEAD},
}


class IllegalStateTransition(RuntimeError):
    pass


@dataclass
class GroupMember:
    member_id: str
    client_id: str
    client_host: str
    rebalance_timeout_ms: int
    session_timeout_ms: int
    protocol_type: str
    protocols: list[tuple[str, bytes]]        # (assignor name, subscription bytes), preferred first
    group_instance_id: str | None = None
    assignment: bytes = b""
    awaiting_join: Callable[[object], None] | None = None
    awaiting_sync: Callable[[object], None] | None = None
    is_new: bool = False

    def protocol_names(self) -> list[str]:
        return [name for name, _ in self.protocols]

    def metadata(self, protocol: str | None) -> bytes:   # None: an Empty group's, which no member supports
        for name, data in self.protocols:
            if name == protocol:
                return data
        raise KeyError(f"member {self.member_id} does not support protocol {protocol!r}")

    def vote(self, candidates: set[str]) -> str:
        """Its first choice among the protocols every member supports."""
        return next(name for name, _ in self.protocols if name in candidates)

    def matches(self, protocols: list[tuple[str, bytes]]) -> bool:
        return list(protocols) == list(self.protocols)

    def has_satisfied_heartbeat(self) -> bool:
        """Whether a missed heartbeat deadline is forgiven: a member parked in a JoinGroup or
        SyncGroup cannot heartbeat; a new member that never completed a join can be expired."""
        if self.is_new:
            return False
        return self.awaiting_join is not None or self.awaiting_sync is not None


@dataclass
class ClassicGroup:
    group_id: str
    state: str = EMPTY
    previous_state: str = DEAD
    state_timestamp: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    generation: int = 0
    leader_id: str | None = None
    members: dict[str, GroupMember] = field(default_factory=dict)
    pending_join_members: set[str] = field(default_factory=set)
    pending_sync_members: set[str] = field(default_factory=set)
    new_member_added: bool = False

    def __post_init__(self) -> None:
        self._order: JavaHashSetOrder[str] = JavaHashSetOrder(java_string_hashcode)

    # -- members ----------------------------------------------------------------------------
    def has_member(self, member_id: str) -> bool:
        return member_id in self.members

    def is_leader(self, member_id: str) -> bool:
        return self.leader_id == member_id

    def members_in_order(self) -> list[GroupMember]:
        """Members as Java's `members.values()` yields them."""
        return [self.members[m] for m in self._order.in_java_order()]

    def add(self, member: GroupMember) -> None:
        if not self.members:
            self.protocol_type = member.protocol_type
        if self.protocol_type != member.protocol_type:
            raise IllegalStateTransition("the group and member's protocol type must be the same")
        if not self.supports_protocols(member.protocol_type, member.protocol_names()):
            raise IllegalStateTransition("none of the member's protocols can be supported")
        if self.leader_id is None:
            self.leader_id = member.member_id
        self.members[member.member_id] = member
        self._order.add(member.member_id)
        self.pending_join_members.discard(member.member_id)

    def remove(self, member_id: str) -> GroupMember | None:
        removed = self.members.pop(member_id, None)
        if removed is not None:
            self._order.remove(member_id)
        if self.leader_id == member_id:
            self.leader_id = self._order.first() if len(self._order) else None
        self.pending_join_members.discard(member_id)
        self.pending_sync_members.discard(member_id)
        return removed

    def add_pending_member(self, member_id: str) -> None:
        if member_id in self.members:
            raise IllegalStateTransition(f"{member_id} is already a member")
        self.pending_join_members.add(member_id)

    def num_awaiting_join(self) -> int:
        return sum(1 for m in self.members.values() if m.awaiting_join is not None)

    def has_all_members_joined(self) -> bool:
        return len(self.members) == self.num_awaiting_join() and not self.pending_join_members

    def not_yet_rejoined(self) -> list[GroupMember]:
        return [m for m in self.members_in_order() if m.awaiting_join is None]

    def maybe_elect_new_joined_leader(self) -> bool:
        """Keep a leader that rejoined, or take the first member that did; False if none did."""
        if self.leader_id is None:
            return False
        if self.members[self.leader_id].awaiting_join is not None:
            return True
        for member in self.members_in_order():
            if member.awaiting_join is not None:
                self.leader_id = member.member_id
                return True
        return False

    def rebalance_timeout_ms(self) -> int:
        return max((m.rebalance_timeout_ms for m in self.members.values()), default=0)

    # -- protocols --------------------------------------------------------------------------
    def _protocol_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for member in self.members.values():
            for name in member.protocol_names():
                counts[name] = counts.get(name, 0) + 1
        return counts

    def _candidate_protocols(self) -> set[str]:
        return {name for name, count in self._protocol_counts().items() if count == len(self.members)}

    def supports_protocols(self, protocol_type: str, protocols: list[str]) -> bool:
        """Whether a member offering `protocols` may join: an empty group takes any; otherwise one
        of them must be supported by every member (trivially true while nobody is in the group)."""
        if self.state == EMPTY:
            return bool(protocol_type) and bool(protocols)
        counts = self._protocol_counts()
        return self.protocol_type == protocol_type and any(counts.get(name, 0) == len(self.members)
                                                            for name in protocols)

    def select_protocol(self) -> str:
        """Each member votes for its first choice among the protocols all support; most votes win
        (a tie goes to the protocol Java's HashMap of votes yields first)."""
        candidates = self._candidate_protocols()
        votes: dict[str, int] = {}
        for member in self.members_in_order():
            choice = member.vote(candidates)
            votes[choice] = votes.get(choice, 0) + 1
        best = None
        for name in java_hashmap_order(votes, java_string_hashcode):
            if best is None or votes[name] > votes[best]:
                best = name
        if best is None:   # ClassicGroup.selectProtocol refuses too (init_next_generation never asks then)
            raise IllegalStateTransition(f"cannot select a protocol for the empty group {self.group_id}")
        return best

    # -- states -----------------------------------------------------------------------------
    def can_rebalance(self) -> bool:
        return self.state in VALID_PREVIOUS_STATES[PREPARING_REBALANCE]

    def transition_to(self, state: str, now_ms: int) -> None:
        if self.state not in VALID_PREVIOUS_STATES[state]:
            raise IllegalStateTransition(f"group {self.group_id} cannot go from {self.state} to {state}")
        self.previous_state, self.state = self.state, state
        self.state_timestamp = now_ms

    def init_next_generation(self, now_ms: int) -> None:
        self.generation += 1
        if self.members:
            self.protocol_name = self.select_protocol()
            self.transition_to(COMPLETING_REBALANCE, now_ms)
        else:
            self.protocol_name = None
            self.transition_to(EMPTY, now_ms)
        self.pending_sync_members.clear()

    # -- request validation (an error name, or None) ----------------------------------------
    def validate_member(self, member_id: str) -> str | None:
        return None if member_id in self.members else Errors.UNKNOWN_MEMBER_ID

    def validate_offset_commit(self, member_id: str, generation: int) -> str | None:
        """ClassicGroup.validateOffsetCommit for a plain (non-transactional) commit."""
        if self.state == DEAD:
            return Errors.COORDINATOR_NOT_AVAILABLE
        if generation < 0 and self.state == EMPTY:
            return None     # a consumer outside group management (assign()) or an admin tool
        if generation >= 0 or member_id:
            error = self.validate_member(member_id)
            if error:
                return error
            if generation != self.generation:
                return Errors.ILLEGAL_GENERATION
        elif self.state != EMPTY:
            return Errors.UNKNOWN_MEMBER_ID
        if self.state == COMPLETING_REBALANCE:
            return Errors.REBALANCE_IN_PROGRESS
        return None
