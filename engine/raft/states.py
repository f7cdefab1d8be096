"""The states of a Raft replica in one epoch (KIP-595), as Kafka's raft/ module names them.

    UnattachedState  no leader known in this epoch; `voted_id` >= 0 once it voted ("voted"):
                     Kafka 3.x had a separate VotedState, Kafka 4 keeps the vote in UnattachedState
    FollowerState    fetching from the leader of this epoch
    CandidateState   asking the voters for their votes in this epoch
    LeaderState      leading this epoch: replica progress, high watermark, check-quorum bookkeeping
    ResignedState    a leader that gave up this epoch (check-quorum failed, or it restarted as
                     leader); it votes for no one in it and waits for a new election

Each is data plus the rules that read only it (can_grant_vote, the vote count, the high watermark
rule); when to change state is engine/raft/client.py's, as KafkaRaftClient's. Timers (election
timeout, fetch timeout, backoff, check quorum) are virtual deadlines the client schedules.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engine.raft.quorum_state_store import ElectionState

NONE = -1


@dataclass(slots=True)
class UnattachedState:
    epoch: int
    election_deadline_ms: int | None       # None for an observer: it never stands for election
    voted_id: int = NONE
    high_watermark: int | None = None

    @property
    def name(self) -> str:
        return "voted" if self.voted_id >= 0 else "unattached"

    @property
    def leader_id(self) -> int:
        return NONE

    def election(self) -> ElectionState:
        return ElectionState(self.epoch, NONE, self.voted_id)

    def can_grant_vote(self, candidate_id: int, log_up_to_date: bool) -> tuple[bool, str]:
        """UnattachedState.canGrantVote: one vote per epoch, for a candidate whose log is at
        least as up to date as ours."""
        if self.voted_id >= 0:
            if candidate_id == self.voted_id:
                return True, "already voted for this candidate in this epoch"
            return False, f"already voted for {self.voted_id} in epoch {self.epoch}"
        if not log_up_to_date:
            return False, "candidate's log is not as up to date as the voter's"
        return True, "log up to date, no vote yet in this epoch"


@dataclass(slots=True)
class FollowerState:
    epoch: int
    leader_id: int
    fetch_deadline_ms: int                  # FollowerState's fetchTimer
    high_watermark: int | None = None
    name: str = "follower"

    def election(self) -> ElectionState:
        return ElectionState(self.epoch, self.leader_id, NONE)

    def can_grant_vote(self, candidate_id: int, log_up_to_date: bool) -> tuple[bool, str]:
        return False, f"already following leader {self.leader_id} in epoch {self.epoch}"


@dataclass(slots=True)
class CandidateState:
    epoch: int
    local_id: int
    voters: tuple[int, ...]
    retries: int                            # elections in a row (the backoff grows with it)
    election_deadline_ms: int
    granted: set[int] = field(default_factory=set)
    rejected: set[int] = field(default_factory=set)
    backoff_until_ms: int | None = None     # backing off before the next election
    high_watermark: int | None = None
    name: str = "candidate"

    def __post_init__(self) -> None:
        self.granted.add(self.local_id)     # a candidate votes for itself

    @property
    def leader_id(self) -> int:
        return NONE

    def election(self) -> ElectionState:
        return ElectionState(self.epoch, NONE, self.local_id)

    @property
    def majority(self) -> int:
        return len(self.voters) // 2 + 1

    @property
    def unrecorded(self) -> list[int]:
        return [v for v in self.voters if v not in self.granted and v not in self.rejected]

    @property
    def is_vote_granted(self) -> bool:
        return len(self.granted) >= self.majority

    @property
    def is_vote_rejected(self) -> bool:
        """No majority can be reached any more (CandidateState.isVoteRejected)."""
        return len(self.granted) + len(self.unrecorded) < self.majority

    @property
    def is_backing_off(self) -> bool:
        return self.backoff_until_ms is not None

    def can_grant_vote(self, candidate_id: int, log_up_to_date: bool) -> tuple[bool, str]:
        # CandidateState.canGrantVote: its vote for itself is implicit, never granted to another.
        return False, f"is itself a candidate in epoch {self.epoch}"


@dataclass(slots=True)
class ReplicaState:
    """The leader's view of one replica (LeaderState.ReplicaState)."""
    node_id: int
    end_offset: int | None = None           # its last fetch offset: everything below it is on its disk
    last_fetch_ms: int = -1
    has_acknowledged_leader: bool = False


@dataclass(slots=True)
class LeaderState:
    epoch: int
    local_id: int
    epoch_start_offset: int
    voters: tuple[int, ...]
    granting_voters: tuple[int, ...]
    check_quorum_deadline_ms: int
    voter_states: dict[int, ReplicaState] = field(default_factory=dict)
    observer_states: dict[int, ReplicaState] = field(default_factory=dict)
    fetched_voters: set[int] = field(default_factory=set)
    high_watermark: int | None = None       # unknown until an entry of this epoch is committed
    name: str = "leader"

    def __post_init__(self) -> None:
        for voter in self.voters:
            self.voter_states[voter] = ReplicaState(voter, has_acknowledged_leader=voter == self.local_id)

    @property
    def leader_id(self) -> int:
        return self.local_id

    def election(self) -> ElectionState:
        return ElectionState(self.epoch, self.local_id, NONE)

    def can_grant_vote(self, candidate_id: int, log_up_to_date: bool) -> tuple[bool, str]:
        return False, f"is the leader of epoch {self.epoch}"

    def non_acknowledging_voters(self) -> list[int]:
        return [v for v, s in self.voter_states.items() if not s.has_acknowledged_leader]

    def update_local_state(self, end_offset: int) -> bool:
        """The leader's own (flushed) log end moved; True if the high watermark moved."""
        self.voter_states[self.local_id].end_offset = end_offset
        return self._maybe_update_high_watermark()

    def update_replica_state(self, node_id: int, now_ms: int, fetch_offset: int) -> bool:
        """A replica fetched at `fetch_offset` (so it has everything below it); True if the high
        watermark moved. Observers are tracked but never counted (LeaderState.updateReplicaState)."""
        if node_id < 0:
            return False
        is_voter = node_id in self.voter_states
        states = self.voter_states if is_voter else self.observer_states
        state = states.get(node_id)
        if state is None:
            state = states[node_id] = ReplicaState(node_id)
        state.end_offset = fetch_offset
        state.last_fetch_ms = max(state.last_fetch_ms, now_ms)
        state.has_acknowledged_leader = True
        return is_voter and self._maybe_update_high_watermark()

    def record_voter_fetch(self, node_id: int) -> bool:
        """updateCheckQuorumForFollowingVoter: True when a majority (the leader counted) has
        fetched since the check-quorum timer was last reset, which resets it."""
        if node_id in self.voter_states and node_id != self.local_id:
            self.fetched_voters.add(node_id)
        if len(self.fetched_voters) >= len(self.voters) // 2 + 1 - 1:   # minus the leader itself
            self.fetched_voters.clear()
            return True
        return False

    def voters_by_descending_fetch_offset(self) -> list[int]:
        """The other voters, most caught up first (nonLeaderVotersByDescendingFetchOffset): the
        order a resigning leader names its preferred successors in."""
        others = [s for s in self.voter_states.values() if s.node_id != self.local_id]
        others.sort(key=lambda s: (-(s.end_offset if s.end_offset is not None else -1), s.node_id))
        return [s.node_id for s in others]

    def _maybe_update_high_watermark(self) -> bool:
        """LeaderState.maybeUpdateHighWatermark: the largest offset a majority of voters (the leader
        counted) has, and only once it is past the epoch start offset — an entry of this epoch is
        committed — so a new leader never exposes an older epoch's entries it cannot vouch for."""
        offsets = sorted((s.end_offset for s in self.voter_states.values() if s.end_offset is not None),
                         reverse=True)
        index = len(self.voter_states) // 2
        if index >= len(offsets):
            return False
        candidate = offsets[index]
        if candidate <= self.epoch_start_offset:
            return False
        if self.high_watermark is None or candidate > self.high_watermark:
            self.high_watermark = candidate
            return True
        return False


@dataclass(slots=True)
class ResignedState:
    epoch: int
    local_id: int
    election_deadline_ms: int
    unacked_voters: set[int]
    preferred_successors: tuple[int, ...] = ()
    high_watermark: int | None = None
    name: str = "resigned"

    @property
    def leader_id(self) -> int:
        return self.local_id

    def election(self) -> ElectionState:
        return ElectionState(self.epoch, self.local_id, NONE)

    def can_grant_vote(self, candidate_id: int, log_up_to_date: bool) -> tuple[bool, str]:
        return False, f"resigned as leader of epoch {self.epoch}"


EpochState = UnattachedState | FollowerState | CandidateState | LeaderState | ResignedState
