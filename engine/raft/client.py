"""One replica of the KRaft metadata quorum: Kafka's KafkaRaftClient (KIP-595), on the engine's virtual time.

A RaftClient lives in a host process (a broker's, in combined mode, or a dedicated controller's
Node) and keeps `__cluster_metadata-0` in `log_dir`: real segments (engine/raft/replicated_log.py)
and the `quorum-state` file (engine/raft/quorum_state_store.py). Its requests reach it through
`request_handlers()`, merged into the host's handler table.

The state machine is KafkaRaftClient's, driven the same way: handlers change the state, then a
`poll` looks at the state and does what it asks (send Vote/Fetch/BeginQuorumEpoch/EndQuorumEpoch,
start an election, resign) and sleeps until its next deadline (KafkaRaftClient.pollCurrentState).

- Voters start Unattached, stand for election after a random timeout (election.timeout.ms plus a
  random part below it, QuorumState.randomElectionTimeoutMs), as Candidates of epoch + 1 that vote
  for themselves and ask the others. A voter grants one vote per epoch, to a candidate whose log is
  at least as up to date as its own by (last epoch, end offset) (handleVoteRequest, canGrantVote).
  A candidate that cannot win any more, or whose election timed out, backs off a random
  exponential time (binaryExponentialElectionBackoffMs, capped by election.backoff.max.ms) and
  tries again in the next epoch.
- Every state change that must survive a crash (a vote, a new epoch, a leader) is written to
  `quorum-state` before it is acted on (QuorumState.durableTransitionTo); a restarted voter does not
  vote twice in an epoch, and a restarted leader comes back Resigned in its epoch.
- The leader writes a LeaderChangeMessage control batch at the start of its epoch and tells the
  voters with BeginQuorumEpoch (re-sent every fetch.timeout.ms / 2). Followers and observers pull
  with long-polling Fetch requests; a fetch whose (offset, last fetched epoch) does not continue the
  leader's log is answered with the diverging epoch and its end offset, and the follower truncates
  there (KIP-595's log reconciliation). The high watermark is the largest offset a majority of
  voters has flushed, and only once it is past the leader's epoch start
  (LeaderState.maybeUpdateHighWatermark). A leader that has not heard a Fetch from a majority within
  1.5 x fetch.timeout.ms resigns (LeaderState's checkQuorumTimer), so a leader cut off in a
  minority stops and cannot commit; it tells the voters with EndQuorumEpoch, naming its successors
  most caught up first. A follower that has not heard from its leader for fetch.timeout.ms stands
  for election.
- Observers (brokers: `is_voter=False`) fetch but never vote and are not counted for the high
  watermark. They find the leader by fetching from any voter: the answer names the leader.

Deliberate differences from Kafka:
- No pre-vote (KIP-996): a voter cut off from the others raises its epoch at each election timeout
  and, when it comes back, makes the quorum elect again (its log is behind, so it does not win).
- No snapshots, no log cleaning, a static voter set (no KIP-853 reconfiguration), no cluster id.
- `append` writes one batch at once (no append.linger.ms accumulator): a quorum controller writes
  the records of one operation as one batch, as Kafka's does, and `append` returns its last offset.
- A parked Fetch also completes when the leader's high watermark passes the fetcher's
  (KAFKA-14145, Kafka 4.1), not only on new records; answering a parked fetch after its wait
  recomputes the answer (Kafka 4.0 sends the one it built on arrival).
- A clean shutdown (`close`) closes the files; it does not resign gracefully first.
"""
from __future__ import annotations

import os
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

from engine import events as ev
from engine.common.errors import Errors, KafkaError
from engine.raft.config import QuorumConfig
from engine.raft.control import leader_change_record
from engine.raft.listener import RaftListener
from engine.raft.messages import (
    NO_LEADER,
    BeginQuorumEpochRequest,
    BeginQuorumEpochResponse,
    DivergingEpoch,
    EndQuorumEpochRequest,
    EndQuorumEpochResponse,
    RaftFetchRequest,
    RaftFetchResponse,
    VoteRequest,
    VoteResponse,
)
from engine.raft.quorum_state_store import ElectionState, FileQuorumStateStore
from engine.raft.replicated_log import MetadataLog
from engine.raft.states import (
    CandidateState,
    EpochState,
    FollowerState,
    LeaderState,
    ResignedState,
    UnattachedState,
)
from engine.sim.scheduler import Scheduled
from engine.storage import record_batch as rb
from engine.storage.log import Log

RETRY_BACKOFF_BASE_MS = 100      # KafkaRaftClient.RETRY_BACKOFF_BASE_MS: the election backoff's unit
METADATA_PARTITION = "__cluster_metadata-0"

Respond = Callable[..., None]
Handler = Callable[[str, Any, Respond], None]


class NotLeaderError(KafkaError):
    """append() on a replica that is not the leader (raft's NotLeaderException)."""
    error = Errors.NOT_LEADER_OR_FOLLOWER


class LeaderAndEpoch(NamedTuple):
    leader_id: int      # -1: no leader known in this epoch
    epoch: int


class RaftHost(Protocol):
    """What the client asks of the process it runs in (engine.node.Node has all of it)."""
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
    def send(self, dst: str, request: object, on_response: Callable[[object | None], None], *,
             timeout_ms: int | None = None, summary: dict | None = None, foreground: bool = True) -> int: ...
    def publish(self, event: ev.Event) -> None: ...
    def rng(self, name: str) -> random.Random: ...


@dataclass(slots=True)
class _ParkedFetch:
    """A Fetch the leader holds until new records, a high watermark past the fetcher's, or its wait ends."""
    src: str
    request: RaftFetchRequest
    respond: Respond
    timer: Scheduled | None = None


class _Connections:
    """KafkaRaftClient's RequestManager, reduced: one request in flight per destination, a retry
    backoff after a failed one, and `reset_all` (resetConnections) on a state change, after which
    answers to earlier requests are ignored."""

    def __init__(self, retry_backoff_ms: int) -> None:
        self.retry_backoff_ms = retry_backoff_ms
        self.generation = 0
        self.in_flight: set[int] = set()
        self.backoff_until: dict[int, int] = {}

    def is_ready(self, node: int, now: int) -> bool:
        return node not in self.in_flight and self.backoff_until.get(node, 0) <= now

    def on_sent(self, node: int) -> None:
        self.in_flight.add(node)

    def on_answer(self, node: int, success: bool, now: int, backoff_ms: int | None = None) -> None:
        self.in_flight.discard(node)
        if success:
            self.backoff_until.pop(node, None)
        else:
            self.backoff_until[node] = now + (self.retry_backoff_ms if backoff_ms is None else backoff_ms)

    def reset_all(self) -> None:
        self.generation += 1
        self.in_flight.clear()
        self.backoff_until.clear()

    def next_ready_ms(self, nodes: list[int]) -> int | None:
        """When the first of `nodes` not in flight leaves its backoff (None: all in flight)."""
        times = [self.backoff_until.get(n, 0) for n in nodes if n not in self.in_flight]
        return min(times) if times else None


class RaftClient:
    def __init__(self, host: RaftHost, node_id: int, voters: dict[int, str], log_dir: str,
                 config: QuorumConfig, listener: RaftListener, *, is_voter: bool, fsync: bool = False) -> None:
        """`voters`: every voter's node.id -> its node name on the network (controller.quorum.voters);
        `log_dir`: the `__cluster_metadata-0` directory; `is_voter` must say whether `node_id` is one
        of `voters` (an observer, a broker, is not)."""
        if isinstance(node_id, bool) or not isinstance(node_id, int) or node_id < 0:
            raise ValueError(f"node.id must be an integer >= 0, got {node_id!r}")
        if not isinstance(voters, dict) or not voters:
            raise ValueError("controller.quorum.voters must name at least one voter")
        for voter, name in voters.items():
            if isinstance(voter, bool) or not isinstance(voter, int) or voter < 0 or not isinstance(name, str) \
                    or not name:
                raise ValueError(f"controller.quorum.voters: bad entry {voter!r} -> {name!r} "
                                 f"(a node.id >= 0 and a node name)")
        if is_voter != (node_id in voters):
            raise ValueError(f"node {node_id} is_voter={is_voter}, but controller.quorum.voters is "
                             f"{sorted(voters)}")
        if not isinstance(config, QuorumConfig):
            raise TypeError(f"config must be a QuorumConfig, not {type(config).__name__}")
        self.host = host
        self.node_id = node_id
        self.voters = dict(sorted(voters.items()))
        self.log_dir = log_dir
        self.config = config
        self.listener = listener
        self.is_voter = is_voter
        self._fsync = fsync
        self._random = host.rng(f"raft/{node_id}/{host.incarnation}")
        self._conns = _Connections(config.retry_backoff_ms)
        self._metadata_log: MetadataLog | None = None
        self._store = FileQuorumStateStore(log_dir, fsync=fsync)
        self._state: EpochState = UnattachedState(0, None)
        self._running = False
        self._poll_timer: Scheduled | None = None
        self._poll_due_ms: int | None = None
        self._parked: list[_ParkedFetch] = []
        self._begin_quorum_due_ms = 0
        self._next_offset = 0                       # the listener's next offset (ListenerContext)
        self._delivering = False
        self._last_fired = LeaderAndEpoch(NO_LEADER, -1)

    # == the public view ===========================================================================
    @property
    def metadata_log(self) -> MetadataLog:
        if self._metadata_log is None:
            raise RuntimeError(f"Raft client {self.node_id} has not started")
        return self._metadata_log

    @property
    def log(self) -> Log:
        return self.metadata_log.log

    @property
    def state(self) -> str:
        """"unattached", "voted", "follower", "candidate", "leader" or "resigned"."""
        return self._state.name

    @property
    def epoch(self) -> int:
        return self._state.epoch

    @property
    def voted_for(self) -> int:
        """The candidate this replica voted for in its epoch (-1: none, or the vote is no longer kept)."""
        return self._state.election().voted_id

    @property
    def high_watermark(self) -> int:
        """The high watermark this replica knows (0 until it learns one after a start)."""
        return self.metadata_log.high_watermark

    @property
    def log_end_offset(self) -> int:
        return self.metadata_log.end_offset

    @property
    def running(self) -> bool:
        return self._running

    def leader_and_epoch(self) -> LeaderAndEpoch:
        return LeaderAndEpoch(self._state.leader_id, self._state.epoch)

    def is_leader(self) -> bool:
        return isinstance(self._state, LeaderState)

    def replica_states(self) -> dict[int, int | None]:
        """As leader: each replica's last fetch offset (voters and observers; DescribeQuorum); else {}."""
        state = self._state
        if not isinstance(state, LeaderState):
            return {}
        return {s.node_id: s.end_offset for s in [*state.voter_states.values(), *state.observer_states.values()]}

    def describe(self) -> dict[str, Any]:
        leader, epoch = self.leader_and_epoch()
        return {"node_id": self.node_id, "is_voter": self.is_voter, "state": self.state, "epoch": epoch,
                "leader_id": leader, "voted_for": self.voted_for, "log_end_offset": self.log_end_offset,
                "high_watermark": self.high_watermark,
                "last_fetched_epoch": self.metadata_log.last_fetched_epoch}

    def request_handlers(self) -> dict[type, Handler]:
        """{request type: handler(src, request, respond)} for the host's handler table."""
        return {VoteRequest: self._handle_vote,
                BeginQuorumEpochRequest: self._handle_begin_quorum_epoch,
                EndQuorumEpochRequest: self._handle_end_quorum_epoch,
                RaftFetchRequest: self._handle_fetch}

    # == life cycle ================================================================================
    def start(self) -> None:
        """Open the log and the quorum state, and take up the state they describe (QuorumState.initialize)."""
        if self._running:
            raise RuntimeError(f"Raft client {self.node_id} is already running")
        os.makedirs(self.log_dir, exist_ok=True)
        self._metadata_log = MetadataLog(self.log_dir, self.config, clock_ms=self.host.record_time_ms,
                                         fsync=self._fsync)
        self._running = True
        stored = self._store.read_election_state() or ElectionState(0)
        last_epoch = self.metadata_log.last_fetched_epoch
        state: EpochState
        if stored.epoch < last_epoch:
            state = self._unattached(last_epoch)
        elif self.is_voter and stored.leader_id == self.node_id:
            # A leader comes back Resigned in its epoch: it must not vote in it, and an entry it
            # wrote but lost (unflushed) must not be written again with the same (offset, epoch).
            state = self._resigned(stored.epoch, ())
        elif self.is_voter and stored.voted_id == self.node_id:
            state = CandidateState(stored.epoch, self.node_id, tuple(self.voters), 1,
                                   self._now + self._random_election_timeout_ms())
        elif stored.has_voted:
            state = UnattachedState(stored.epoch, self._election_deadline(), voted_id=stored.voted_id)
        elif stored.has_leader and stored.leader_id in self.voters:
            state = FollowerState(stored.epoch, stored.leader_id, self._now + self.config.fetch_timeout_ms)
        else:
            state = self._unattached(stored.epoch)
        self._durable_transition(state)

    def crash(self, *, power_loss: bool = False) -> None:
        """The host crashed: nothing more runs in this incarnation. A power loss also loses the log's
        unflushed bytes (an observer's: voters flush every append)."""
        if not self._running:
            return
        self._stop()
        self.metadata_log.close_after_crash(lose_unflushed=power_loss)

    def close(self) -> None:
        """A clean stop: nothing more runs; the log flushed and closed (no graceful resignation)."""
        if not self._running:
            return
        self._stop()
        self.metadata_log.close()

    def _stop(self) -> None:
        self._running = False
        self.host.cancel(self._poll_timer)
        self._poll_timer = None
        for parked in self._parked:
            self.host.cancel(parked.timer)
        self._parked = []

    # == the leader's API ==========================================================================
    def append(self, values: list[bytes]) -> int:
        """Append one batch of records (null keys, these values) as the leader; its last offset.
        Committed once the high watermark passes it (the listener's handle_commit then has it)."""
        if not isinstance(values, list) or not values or not all(isinstance(v, bytes) for v in values):
            raise ValueError("append needs a non-empty list of bytes values")
        state = self._state
        if not self._running or not isinstance(state, LeaderState):
            leader, epoch = self.leader_and_epoch()
            raise NotLeaderError(f"node {self.node_id} is not the leader of __cluster_metadata "
                                 f"(it is {self.state} in epoch {epoch}, leader {leader})")
        batch = rb.encode_batch([(None, v) for v in values], base_timestamp=self.host.record_time_ms())
        info = self.metadata_log.append_as_leader(batch, state.epoch)
        self._after_leader_append(state)
        return info.last_offset

    # == transitions (QuorumState) =================================================================
    @property
    def _now(self) -> int:
        return self.host.now_ms

    def _random_election_timeout_ms(self) -> int:
        """QuorumState.randomElectionTimeoutMs: electionTimeout + random in [0, electionTimeout)."""
        timeout = self.config.election_timeout_ms
        return timeout + self._random.randrange(timeout)

    def _election_deadline(self) -> int | None:
        return self._now + self._random_election_timeout_ms() if self.is_voter else None

    def _unattached(self, epoch: int) -> UnattachedState:
        return UnattachedState(epoch, self._election_deadline())

    def _resigned(self, epoch: int, successors: tuple[int, ...]) -> ResignedState:
        return ResignedState(epoch, self.node_id, self._now + self._random_election_timeout_ms(),
                             {v for v in self.voters if v != self.node_id}, successors)

    def _durable_transition(self, new: EpochState) -> None:
        """Write the election state, then take it up (QuorumState.durableTransitionTo)."""
        self._store.write_election_state(new.election(), list(self.voters))
        self._memory_transition(new)

    def _memory_transition(self, new: EpochState) -> None:
        old = self._state
        if old.high_watermark is not None and not isinstance(new, LeaderState):
            new.high_watermark = old.high_watermark
        self._state = new
        self._conns.reset_all()     # resetConnections: answers to earlier requests are ignored
        if isinstance(old, LeaderState) and new is not old:
            self._fail_parked_fetches()
            if not isinstance(new, ResignedState):
                self.host.publish(ev.RaftLeaderResigned(node=self.node_id, epoch=old.epoch,
                                                        reason=f"saw epoch {new.epoch}"))
        self._maybe_fire_leader_change()
        self._wakeup()

    def _transition_to_unattached(self, epoch: int) -> None:
        """A newer epoch with no leader known (QuorumState.transitionToUnattached): a candidate or an
        unattached voter keeps its election deadline."""
        old = self._state
        deadline: int | None
        if not self.is_voter:
            deadline = None
        elif isinstance(old, (CandidateState, UnattachedState)):
            deadline = old.election_deadline_ms
        else:
            deadline = self._election_deadline()
        self._durable_transition(UnattachedState(epoch, deadline))

    def _transition_to_voted(self, candidate: int, epoch: int) -> None:
        # The election timeout starts again: the candidate has as good a chance as this voter.
        self._durable_transition(UnattachedState(epoch, self._election_deadline(), voted_id=candidate))

    def _transition_to_follower(self, epoch: int, leader: int) -> None:
        self._durable_transition(FollowerState(epoch, leader, self._now + self.config.fetch_timeout_ms))
        # onBecomeFollower: pending fetches are answered (by _memory_transition, leaving the leader state).

    def _transition_to_candidate(self) -> None:
        old = self._state
        retries = old.retries + 1 if isinstance(old, CandidateState) else 1
        state = CandidateState(old.epoch + 1, self.node_id, tuple(self.voters), retries,
                               self._now + self._random_election_timeout_ms())
        self._durable_transition(state)
        self.host.publish(ev.RaftElectionStarted(node=self.node_id, epoch=state.epoch, retries=retries))
        self._maybe_become_leader(state)

    def _maybe_become_leader(self, state: CandidateState) -> None:
        if self._state is state and state.is_vote_granted:
            self._become_leader(state)

    def _become_leader(self, candidate: CandidateState) -> None:
        """onBecomeLeader: the epoch starts at the log end; a LeaderChangeMessage is written at once
        so the high watermark can move in this epoch."""
        log = self.metadata_log
        start = log.end_offset
        state = LeaderState(candidate.epoch, self.node_id, start, tuple(self.voters),
                            tuple(sorted(candidate.granted)),
                            self._now + self.config.check_quorum_timeout_ms)
        self._durable_transition(state)
        log.initialize_leader_epoch(state.epoch)
        self._begin_quorum_due_ms = self._now
        self.host.publish(ev.RaftLeaderElected(node=self.node_id, epoch=state.epoch,
                                               granting_voters=list(state.granting_voters),
                                               epoch_start_offset=start))
        key, value = leader_change_record(self.node_id, list(self.voters), list(state.granting_voters))
        batch = rb.encode_batch([(key, value)], base_timestamp=self.host.record_time_ms(), is_control=True)
        log.append_as_leader(batch, state.epoch)
        self._after_leader_append(state)

    def _transition_to_resigned(self, reason: str) -> None:
        state = self._state
        if not isinstance(state, LeaderState):
            return
        successors = tuple(state.voters_by_descending_fetch_offset())
        # Resigned is a soft state, not written (QuorumState.transitionToResigned).
        self._memory_transition(self._resigned(state.epoch, successors))
        self.host.publish(ev.RaftLeaderResigned(node=self.node_id, epoch=state.epoch, reason=reason))

    def _maybe_transition(self, leader: int, epoch: int) -> None:
        """KafkaRaftClient.maybeTransition: a request or answer names (leader, epoch)."""
        current = self._state
        if epoch > current.epoch:
            if leader >= 0 and leader != self.node_id:
                self._transition_to_follower(epoch, leader)
            else:
                self._transition_to_unattached(epoch)
        elif epoch == current.epoch and leader >= 0 and current.leader_id < 0 and leader != self.node_id:
            self._transition_to_follower(epoch, leader)

    # == leader bookkeeping ==========================================================================
    def _after_leader_append(self, state: LeaderState) -> None:
        """flushLeaderLog / updateLeaderEndOffsetAndTimestamp: flush, count the leader's own end
        offset, answer the fetches waiting for new records."""
        log = self.metadata_log
        log.flush()
        if state.update_local_state(log.end_offset):
            self._on_leader_high_watermark(state)
        self._complete_parked(lambda p: p.request.fetch_offset < log.end_offset)

    def _on_leader_high_watermark(self, state: LeaderState) -> None:
        high_watermark = state.high_watermark
        if high_watermark is None or high_watermark <= self.metadata_log.high_watermark:
            return
        self.metadata_log.update_high_watermark(high_watermark)
        self.host.publish(ev.MetadataHighWatermarkAdvanced(node=self.node_id, epoch=state.epoch,
                                                           high_watermark=high_watermark))
        # KAFKA-14145: the fetchers that know an older high watermark learn the new one now.
        self._complete_parked(lambda p: p.request.high_watermark < high_watermark)
        self._deliver_commits()

    # == the listener ==============================================================================
    def _deliver_commits(self) -> None:
        """Hand the listener every committed batch it has not had, in order (updateListenersProgress).
        Re-entrant calls (the listener appends, which commits at once on a single voter) return: the
        loop below picks their batches up."""
        if self._delivering or not self._running:
            return
        self._delivering = True
        try:
            while self._running and self._next_offset < self.metadata_log.high_watermark:
                batches = self.metadata_log.committed_batches(self._next_offset, self.metadata_log.high_watermark)
                if not batches:
                    break
                for batch in batches:
                    if not self._running:
                        break
                    self._next_offset = batch.last_offset + 1
                    self.listener.handle_commit(batch.base_offset, batch.epoch, list(batch.records),
                                                batch.is_control)
        finally:
            self._delivering = False
        self._maybe_fire_leader_change()

    def _maybe_fire_leader_change(self) -> None:
        """ListenerContext.maybeFireLeaderChange: each new epoch, and a leader found in the current
        one; this node's own leadership only once the listener has had everything before the epoch."""
        if not self._running:
            return
        current = self.leader_and_epoch()
        state = self._state
        if isinstance(state, LeaderState) and self._next_offset < state.epoch_start_offset:
            return
        if isinstance(state, ResignedState):
            return      # its own leadership is over and writes fail: nothing to tell (KafkaRaftClient.poll)
        last = self._last_fired
        if current == last:
            return
        if current.epoch > last.epoch or (current.leader_id >= 0 and last.leader_id < 0):
            self._last_fired = current
            self.listener.handle_leader_change(current.leader_id, current.epoch)

    # == polling (KafkaRaftClient.pollCurrentState) =================================================
    def _wakeup(self) -> None:
        """Poll as soon as possible (after the handler that changed something has returned)."""
        if self._running:
            self._schedule_poll(self._now)

    def _schedule_poll(self, due_ms: int) -> None:
        if self._poll_timer is not None and not self._poll_timer.cancelled:
            if self._poll_due_ms is not None and self._poll_due_ms <= due_ms:
                return
            self.host.cancel(self._poll_timer)
        self._poll_due_ms = due_ms
        # An election under way is foreground work; a quorum at rest (leader, followers, observers)
        # only has background timers, so a cluster can go idle.
        foreground = isinstance(self._state, (CandidateState, ResignedState)) or (
            isinstance(self._state, UnattachedState) and self.is_voter)
        self._poll_timer = self.host.schedule(max(0, due_ms - self._now), self._poll,
                                              f"raft {self.state} poll", foreground=foreground)

    def _poll(self) -> None:
        self._poll_timer = None
        self._poll_due_ms = None
        if not self._running:
            return
        state = self._state
        if isinstance(state, LeaderState):
            due = self._poll_leader(state)
        elif isinstance(state, CandidateState):
            due = self._poll_candidate(state)
        elif isinstance(state, FollowerState):
            due = self._poll_follower(state)
        elif isinstance(state, ResignedState):
            due = self._poll_resigned(state)
        else:
            due = self._poll_unattached(state)
        if due is not None and self._state is state and self._running:
            self._schedule_poll(max(due, self._now))

    def _poll_leader(self, state: LeaderState) -> int | None:
        now = self._now
        if len(self.voters) > 1 and now >= state.check_quorum_deadline_ms:
            self._transition_to_resigned(f"no Fetch from a majority of the voters within "
                                         f"{self.config.check_quorum_timeout_ms} ms (check quorum)")
            return None
        if now >= self._begin_quorum_due_ms:
            unacked = set(state.non_acknowledging_voters())
            for voter in self.voters:
                if voter != self.node_id and self._conns.is_ready(voter, now):
                    self._send(voter, BeginQuorumEpochRequest(self.node_id, state.epoch),
                               {"leader": self.node_id, "epoch": state.epoch}, foreground=voter in unacked)
            self._begin_quorum_due_ms = now + self.config.begin_quorum_epoch_timeout_ms
        due = min(self._begin_quorum_due_ms, state.check_quorum_deadline_ms) if len(self.voters) > 1 else None
        return due

    def _poll_candidate(self, state: CandidateState) -> int | None:
        now = self._now
        if state.backoff_until_ms is not None:
            if now >= state.backoff_until_ms:
                self._transition_to_candidate()
                return None
            return state.backoff_until_ms
        if now >= state.election_deadline_ms:
            self._start_backoff(state)
            return state.backoff_until_ms
        if not state.is_vote_rejected:
            last_epoch, end = self.metadata_log.last_fetched_epoch, self.metadata_log.end_offset
            for voter in state.unrecorded:
                if voter != self.node_id and self._conns.is_ready(voter, now):
                    self._send(voter, VoteRequest(self.node_id, state.epoch, last_epoch, end),
                               {"candidate": self.node_id, "epoch": state.epoch, "last_epoch": last_epoch,
                                "end_offset": end})
        return self._next_due(state.election_deadline_ms, [v for v in state.unrecorded if v != self.node_id])

    def _next_due(self, deadline: int, nodes: list[int]) -> int:
        """The state's deadline, or sooner when one of `nodes` leaves its retry backoff first."""
        retry = self._conns.next_ready_ms(nodes)
        return min(deadline, retry) if retry is not None and retry > self._now else deadline

    def _start_backoff(self, state: CandidateState) -> None:
        state.backoff_until_ms = self._now + self._binary_exponential_backoff_ms(state.retries)

    def _binary_exponential_backoff_ms(self, retries: int) -> int:
        """KafkaRaftClient.binaryExponentialElectionBackoffMs."""
        return min(RETRY_BACKOFF_BASE_MS * self._random.randrange(2 << min(20, retries - 1)),
                   self.config.election_backoff_max_ms)

    def _strict_exponential_backoff_ms(self, position: int, total: int) -> int:
        """KafkaRaftClient.strictExponentialElectionBackoffMs: the i-th preferred successor waits
        longer than the one before it."""
        maximum = self.config.election_backoff_max_ms
        if position == 0:
            return 0
        if position < 0 or position >= total:
            return maximum
        base = maximum >> (total - 1)
        return min(maximum, base << (position - 1))

    def _poll_follower(self, state: FollowerState) -> int | None:
        now = self._now
        if now >= state.fetch_deadline_ms:
            if self.is_voter:
                self._transition_to_candidate()
                return None
            # An observer that lost its leader asks any voter who leads now (pollFollowerAsObserver).
            return self._fetch_from_any_voter(now)
        leader = state.leader_id
        if leader in self._conns.backoff_until and self._conns.backoff_until[leader] > now and not self.is_voter:
            due = self._fetch_from_any_voter(now)
            return min(due, state.fetch_deadline_ms)
        if self._conns.is_ready(leader, now):
            self._send_fetch(leader)
        return self._next_due(state.fetch_deadline_ms, [leader])

    def _poll_unattached(self, state: UnattachedState) -> int | None:
        now = self._now
        if state.election_deadline_ms is None:      # an observer: find the leader
            return self._fetch_from_any_voter(now)
        if now >= state.election_deadline_ms:
            self._transition_to_candidate()
            return None
        return state.election_deadline_ms

    def _poll_resigned(self, state: ResignedState) -> int | None:
        now = self._now
        if now >= state.election_deadline_ms:
            self._transition_to_candidate()
            return None
        for voter in sorted(state.unacked_voters):
            if self._conns.is_ready(voter, now):
                self._send(voter, EndQuorumEpochRequest(self.node_id, state.epoch, state.preferred_successors),
                           {"leader": self.node_id, "epoch": state.epoch,
                            "successors": list(state.preferred_successors)})
        return self._next_due(state.election_deadline_ms, sorted(state.unacked_voters))

    def _fetch_from_any_voter(self, now: int) -> int:
        """maybeSendAnyVoterFetch: a Fetch to a random voter that is ready; when to try again."""
        if self._conns.in_flight:
            return now + self.config.request_timeout_ms
        ready = [v for v in self.voters if v != self.node_id and self._conns.is_ready(v, now)]
        if ready:
            self._send_fetch(self._random.choice(ready))
            return now + self.config.request_timeout_ms
        retry = self._conns.next_ready_ms(list(self.voters))
        return retry if retry is not None else now + self.config.retry_backoff_ms

    # == sending ===================================================================================
    def _send(self, voter: int, request: object, summary: dict, *, foreground: bool = True) -> None:
        generation = self._conns.generation
        self._conns.on_sent(voter)

        def on_answer(answer: object | None) -> None:
            if not self._running or generation != self._conns.generation:
                return      # an answer to a request from before the last state change: ignored
            # An answer with an error backs the connection off too (Kafka retries at once when it
            # handled the error, which against a resigned leader is a request every round trip).
            ok = answer is not None and self._handle_answer(voter, answer) \
                and getattr(answer, "error", Errors.NONE) == Errors.NONE
            backoff = None
            if not ok and not self.is_voter and isinstance(answer, RaftFetchResponse) and answer.leader_id < 0:
                # An observer asking a voter that knows no leader either waits as long as a
                # long poll would before asking it again (Kafka asks again after retry.backoff.ms).
                backoff = self.config.fetch_max_wait_ms
            self._conns.on_answer(voter, ok, self._now, backoff)
            self._wakeup()
        self.host.send(self.voters[voter], request, on_answer, timeout_ms=self.config.request_timeout_ms,
                       summary=summary, foreground=foreground)

    def _send_fetch(self, leader: int) -> None:
        log = self.metadata_log
        known = self._state.high_watermark
        hw = log.high_watermark if known is not None or self._next_offset > 0 else -1
        request = RaftFetchRequest(self.node_id, self._state.epoch, log.end_offset, log.last_fetched_epoch,
                                   self.config.fetch_max_wait_ms, high_watermark=hw)
        # Foreground while this replica has entries the leader has not counted as committed yet.
        self._send(leader, request, {"fetch_offset": log.end_offset, "last_fetched_epoch": log.last_fetched_epoch,
                                     "epoch": self._state.epoch},
                   foreground=log.end_offset > log.high_watermark)

    # == answers ===================================================================================
    def _handle_answer(self, source: int, answer: object) -> bool:
        """True when the answer was handled (the connection is ready again at once); False starts
        the retry backoff (RequestManager.onResponseResult)."""
        if isinstance(answer, RaftFetchResponse):
            return self._handle_fetch_response(source, answer)
        if isinstance(answer, VoteResponse):
            return self._handle_vote_response(source, answer)
        if isinstance(answer, BeginQuorumEpochResponse):
            handled = self._handle_common_response(answer.error, answer.leader_id, answer.leader_epoch)
            if handled is not None:
                return handled
            state = self._state
            if answer.error == Errors.NONE and isinstance(state, LeaderState) and source in state.voter_states:
                state.voter_states[source].has_acknowledged_leader = True
            return answer.error == Errors.NONE
        if isinstance(answer, EndQuorumEpochResponse):
            handled = self._handle_common_response(answer.error, answer.leader_id, answer.leader_epoch)
            if handled is not None:
                return handled
            state = self._state
            if answer.error == Errors.NONE and isinstance(state, ResignedState):
                state.unacked_voters.discard(source)
            return answer.error == Errors.NONE
        return False

    def _handle_common_response(self, error: Errors, leader: int, epoch: int) -> bool | None:
        """KafkaRaftClient.maybeHandleCommonResponse: True/False when the answer is dealt with here,
        None when its handler should go on."""
        if epoch < self._state.epoch or error == Errors.UNKNOWN_LEADER_EPOCH:
            return True        # we are ahead: the answer is stale
        if epoch > self._state.epoch or error in (Errors.FENCED_LEADER_EPOCH, Errors.NOT_LEADER_OR_FOLLOWER):
            self._maybe_transition(leader, epoch)
            return True
        if leader >= 0 and self._state.leader_id < 0 and leader != self.node_id:
            self._transition_to_follower(epoch, leader)
            return None if error == Errors.NONE else True
        if error == Errors.BROKER_NOT_AVAILABLE:
            return False
        return None

    def _handle_vote_response(self, source: int, answer: VoteResponse) -> bool:
        handled = self._handle_common_response(answer.error, answer.leader_id, answer.leader_epoch)
        if handled is not None:
            return handled
        if answer.error != Errors.NONE:
            return False
        state = self._state
        if isinstance(state, CandidateState):
            if answer.vote_granted:
                state.granted.add(source)
                self._maybe_become_leader(state)
            else:
                state.rejected.add(source)
                # No majority left: back off now rather than wait out the election timeout.
                if state.is_vote_rejected and not state.is_backing_off:
                    self._start_backoff(state)
        return True

    def _handle_fetch_response(self, source: int, answer: RaftFetchResponse) -> bool:
        handled = self._handle_common_response(answer.error, answer.leader_id, answer.leader_epoch)
        if handled is not None:
            return handled
        state = self._state
        if answer.error != Errors.NONE:
            return False
        if not isinstance(state, FollowerState) or state.leader_id != source:
            return True
        log = self.metadata_log
        if answer.diverging_epoch is not None:
            self._truncate(answer.diverging_epoch)
        elif answer.records:
            first = rb.read_batch_header(answer.records).base_offset
            if first != log.end_offset:     # not where this log ends (it changed meanwhile): drop it
                return True
            log.append_as_follower(answer.records)
            if self.is_voter:
                log.flush()    # a voter flushes before it fetches again (the leader counts its fetch offset)
        if answer.diverging_epoch is None and answer.high_watermark >= 0:
            self._update_follower_high_watermark(state, answer.high_watermark)
        state.fetch_deadline_ms = self._now + self.config.fetch_timeout_ms
        return True

    def _truncate(self, diverging: DivergingEpoch) -> None:
        log = self.metadata_log
        if diverging.end_offset < log.high_watermark:
            raise RuntimeError(f"node {self.node_id}: the leader asked for a truncation to {diverging.end_offset}, "
                               f"below the high watermark {log.high_watermark}")
        before = log.end_offset
        to = log.truncate_to_end_offset(diverging)
        self.host.publish(ev.RaftLogTruncated(node=self.node_id, from_offset=before, to_offset=to,
                                              diverging_epoch=diverging.epoch))

    def _update_follower_high_watermark(self, state: FollowerState, leader_hw: int) -> None:
        log = self.metadata_log
        new = min(log.end_offset, leader_hw)
        state.high_watermark = new
        if new > log.high_watermark:
            log.update_high_watermark(new)
            self._deliver_commits()

    # == requests ==================================================================================
    def _handle_vote(self, src: str, request: VoteRequest, respond: Respond) -> None:
        if not self._running:
            return
        if request.last_offset < 0 or request.last_offset_epoch < 0 \
                or request.last_offset_epoch >= request.candidate_epoch:
            self._answer_vote(respond, Errors.INVALID_REQUEST, False)
            return
        if request.candidate_epoch < self._state.epoch:
            self._vote_cast(request, False, f"stale epoch {request.candidate_epoch} < {self._state.epoch}")
            self._answer_vote(respond, Errors.FENCED_LEADER_EPOCH, False)
            return
        if not self.is_voter:
            self._answer_vote(respond, Errors.INVALID_VOTER_KEY, False)
            return
        if request.candidate_epoch > self._state.epoch:
            self._transition_to_unattached(request.candidate_epoch)
        log = self.metadata_log
        up_to_date = (request.last_offset_epoch, request.last_offset) >= (log.last_fetched_epoch, log.end_offset)
        granted, reason = self._state.can_grant_vote(request.candidate_id, up_to_date)
        state = self._state
        if granted and isinstance(state, UnattachedState) and state.voted_id < 0:
            self._transition_to_voted(request.candidate_id, request.candidate_epoch)
        self._vote_cast(request, granted, reason)
        self._answer_vote(respond, Errors.NONE, granted)

    def _vote_cast(self, request: VoteRequest, granted: bool, reason: str) -> None:
        self.host.publish(ev.RaftVoteCast(voter=self.node_id, candidate=request.candidate_id,
                                          epoch=request.candidate_epoch, granted=granted, reason=reason))

    def _answer_vote(self, respond: Respond, error: Errors, granted: bool) -> None:
        leader, epoch = self.leader_and_epoch()
        respond(VoteResponse(error, leader, epoch, granted),
                {"error": error, "granted": granted, "epoch": epoch})

    def _validate_voter_only_request(self, remote: int, epoch: int) -> Errors | None:
        if epoch < self._state.epoch:
            return Errors.FENCED_LEADER_EPOCH
        if remote < 0:
            return Errors.INVALID_REQUEST
        return None

    def _handle_begin_quorum_epoch(self, src: str, request: BeginQuorumEpochRequest, respond: Respond) -> None:
        if not self._running:
            return
        error = self._validate_voter_only_request(request.leader_id, request.leader_epoch)
        if error is None:
            self._maybe_transition(request.leader_id, request.leader_epoch)
        leader, epoch = self.leader_and_epoch()
        error = error or Errors.NONE
        respond(BeginQuorumEpochResponse(error, leader, epoch), {"error": error, "epoch": epoch})

    def _handle_end_quorum_epoch(self, src: str, request: EndQuorumEpochRequest, respond: Respond) -> None:
        if not self._running:
            return
        error = self._validate_voter_only_request(request.leader_id, request.leader_epoch)
        if error is None:
            self._maybe_transition(request.leader_id, request.leader_epoch)
            state = self._state
            if isinstance(state, FollowerState) and state.leader_id == request.leader_id:
                # The resigning leader's successors stand in order: the first at once, the next later.
                successors = list(request.preferred_successors)
                position = successors.index(self.node_id) if self.node_id in successors else len(successors)
                backoff = self._strict_exponential_backoff_ms(position, len(successors))
                state.fetch_deadline_ms = min(state.fetch_deadline_ms, self._now + backoff)
                self._wakeup()
        leader, epoch = self.leader_and_epoch()
        error = error or Errors.NONE
        respond(EndQuorumEpochResponse(error, leader, epoch), {"error": error, "epoch": epoch})

    def _handle_fetch(self, src: str, request: RaftFetchRequest, respond: Respond) -> None:
        if not self._running:
            return
        if request.max_wait_ms < 0 or request.fetch_offset < 0 or request.last_fetched_epoch < 0 \
                or request.last_fetched_epoch > request.current_leader_epoch:
            self._respond_fetch(respond, self._empty_fetch_response(Errors.INVALID_REQUEST))
            return
        answer = self._try_complete_fetch(request)
        if (answer.error != Errors.NONE or answer.records or request.max_wait_ms == 0
                or answer.diverging_epoch is not None
                or answer.high_watermark > request.high_watermark):
            self._respond_fetch(respond, answer)
            return
        parked = _ParkedFetch(src, request, respond)
        parked.timer = self.host.schedule(request.max_wait_ms, lambda: self._expire_parked(parked),
                                          "raft fetch wait", foreground=False)
        self._parked.append(parked)

    def _try_complete_fetch(self, request: RaftFetchRequest) -> RaftFetchResponse:
        """tryCompleteFetchRequest: the leader's answer, counting the fetch toward the high watermark
        and the check quorum when it continues the leader's log."""
        error = self._validate_leader_only_request(request.current_leader_epoch)
        if error is not None:
            return self._empty_fetch_response(error)
        state = self._state
        assert isinstance(state, LeaderState)
        log = self.metadata_log
        diverging = log.validate_offset_and_epoch(request.fetch_offset, request.last_fetched_epoch)
        if diverging is None and request.fetch_offset > log.end_offset:
            diverging = DivergingEpoch(state.epoch, log.end_offset)   # cannot happen with a valid epoch
        records = b""
        if diverging is None:
            records = log.read(request.fetch_offset, request.max_bytes)
            if state.update_replica_state(request.replica_id, self._now, request.fetch_offset):
                self._on_leader_high_watermark(state)
        if request.replica_id in state.voter_states and state.record_voter_fetch(request.replica_id):
            state.check_quorum_deadline_ms = self._now + self.config.check_quorum_timeout_ms
        hw = state.high_watermark if state.high_watermark is not None else -1
        return RaftFetchResponse(Errors.NONE, self.node_id, state.epoch, hw, 0, diverging, records)

    def _validate_leader_only_request(self, epoch: int) -> Errors | None:
        if epoch < self._state.epoch:
            return Errors.FENCED_LEADER_EPOCH
        if epoch > self._state.epoch:
            return Errors.UNKNOWN_LEADER_EPOCH
        if not isinstance(self._state, LeaderState):
            return Errors.NOT_LEADER_OR_FOLLOWER
        return None

    def _empty_fetch_response(self, error: Errors) -> RaftFetchResponse:
        leader, epoch = self.leader_and_epoch()
        return RaftFetchResponse(error, leader, epoch)

    def _respond_fetch(self, respond: Respond, answer: RaftFetchResponse) -> None:
        summary = {"error": answer.error, "epoch": answer.leader_epoch, "high_watermark": answer.high_watermark,
                   "bytes": len(answer.records)}
        if answer.diverging_epoch is not None:
            summary["diverging_epoch"] = answer.diverging_epoch.epoch
            summary["diverging_end_offset"] = answer.diverging_epoch.end_offset
        respond(answer, summary, foreground=bool(answer.records) or answer.diverging_epoch is not None)

    def _complete_parked(self, ready: Callable[[_ParkedFetch], bool]) -> None:
        if not self._parked:
            return
        done = [p for p in self._parked if ready(p)]
        if not done:
            return
        self._parked = [p for p in self._parked if not ready(p)]
        for parked in done:
            self.host.cancel(parked.timer)
            self._respond_fetch(parked.respond, self._try_complete_fetch(parked.request))

    def _expire_parked(self, parked: _ParkedFetch) -> None:
        if parked in self._parked and self._running:
            self._parked.remove(parked)
            self._respond_fetch(parked.respond, self._try_complete_fetch(parked.request))

    def _fail_parked_fetches(self) -> None:
        """A leader that steps down answers its waiting fetches at once (onBecomeFollower,
        transitionToResigned): they learn of the new state without waiting out their wait."""
        parked, self._parked = self._parked, []
        leader, epoch = self.leader_and_epoch()
        for p in parked:
            self.host.cancel(p.timer)
            self._respond_fetch(p.respond, RaftFetchResponse(Errors.NOT_LEADER_OR_FOLLOWER, leader, epoch))
