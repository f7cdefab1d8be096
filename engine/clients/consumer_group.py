"""A consumer's side of the classic group protocol (Kafka's AbstractCoordinator + ConsumerCoordinator).

    find the coordinator ─▶ JoinGroup ─▶ (leader: run the assignor) ─▶ SyncGroup ─▶ Stable
          ▲                    ▲  MEMBER_ID_REQUIRED: again, with the id       │ heartbeats
          └─ NOT_COORDINATOR,  └── REBALANCE_IN_PROGRESS in a heartbeat ◀───────┘ every heartbeat.interval.ms
             time-outs

What runs where, as in the Java client:
- the *application thread* (inside poll): sending JoinGroup (after onJoinPrepare: the auto-commit,
  then revoking — everything for eager assignors, only what left the subscription for cooperative
  ones, or "lost" when the member was kicked out), installing an assignment received by SyncGroup
  and calling the rebalance listener, auto-commits every auto.commit.interval.ms;
- the *background* (timers and answers, the heartbeat thread): SyncGroup right after the JoinGroup
  answer, heartbeats while CompletingRebalance or Stable, noticing a session without any heartbeat
  answer (the coordinator is then presumed gone) and a poll timeout (max.poll.interval.ms without
  poll(): the member leaves the group on its own).
The rebalance protocol is cooperative only if every configured assignor supports it, so the
default [range, cooperative-sticky] is eager.

A commit made while the coordinator is unknown (commit_async right after assign(), say) waits for
a FindCoordinator and then goes out, as ConsumerCoordinator.commitOffsetsAsync does: commits made
meanwhile wait on the same lookup and go out in order; a failed lookup fails them, unretried.
Simplification: a lookup left unanswered fails them with COORDINATOR_NOT_AVAILABLE (Kafka's
callback gets a RetriableCommitFailedException around a DisconnectException or a time-out).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from engine import events as ev
from engine.clients.consumer_state import RETRIABLE_ERRORS
from engine.common.errors import Errors
from engine.groups.assignors import ASSIGNORS, TopicPartition
from engine.groups.consumer_protocol import (
    STICKY,
    decode_assignment,
    decode_subscription,
    encode_assignment,
    encode_sticky_user_data,
    encode_subscription,
)
from engine.groups.protocol import (
    CONSUMER_PROTOCOL_TYPE,
    UNKNOWN_MEMBER_ID,
    FindCoordinatorRequest,
    HeartbeatRequest,
    JoinGroupProtocol,
    JoinGroupRequest,
    LeaveGroupRequest,
    MemberIdentity,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
    SyncGroupAssignment,
    SyncGroupRequest,
)

if TYPE_CHECKING:
    from engine.clients.consumer import Consumer

UNJOINED = "UNJOINED"
PREPARING_REBALANCE = "PREPARING_REBALANCE"
COMPLETING_REBALANCE = "COMPLETING_REBALANCE"
STABLE = "STABLE"
COOPERATIVE_ASSIGNORS = frozenset({"cooperative-sticky"})
JOIN_GROUP_TIMEOUT_LAPSE_MS = 5000     # JoinGroup waits up to the rebalance timeout, plus this
FATAL_JOIN_ERRORS = frozenset({Errors.INCONSISTENT_GROUP_PROTOCOL, Errors.INVALID_SESSION_TIMEOUT,
                               Errors.GROUP_MAX_SIZE_REACHED, Errors.INVALID_GROUP_ID,
                               Errors.GROUP_AUTHORIZATION_FAILED, Errors.FENCED_INSTANCE_ID})


def _names(partitions) -> list[str]:
    return [str(tp) for tp in sorted(partitions)]


class ConsumerCoordinator:
    def __init__(self, consumer: Consumer, group_id: str) -> None:
        self.consumer = consumer
        self.config = consumer.config
        self.group_id = group_id
        self.coordinator: int | None = None
        self.member_id = UNKNOWN_MEMBER_ID
        self.generation = -1
        self.protocol: str | None = None
        self.state = UNJOINED
        self.rejoin_needed = True
        self.rejoin_reason = "initial join"
        self.needs_join_prepare = True
        self.cooperative = all(a in COOPERATIVE_ASSIGNORS for a in self.config.partition_assignment_strategy)
        self._epoch = 0                    # bumped when the coordinator is marked unknown
        self._last_coordinator = -1
        self._find_failures = 0
        self._find_in_flight = False
        self._next_find_ms = 0
        self._lookup_listeners: list[Callable[[str | None], None]] = []   # commits waiting for a lookup
        self._join_in_flight = False
        self._pending_assignment: tuple | None = None
        self._owned_at_join: list[str] | None = None   # what it owned when it last prepared to rejoin
        self._joined_subscription: list[str] | None = None
        self._assignment_snapshot: dict[str, int] | None = None   # leader: partition counts it assigned
        self._group_topics: set[str] = set()
        self._sticky_memory: tuple[list[TopicPartition], int] | None = None
        self._prepare_commit: str | None = None    # onJoinPrepare's auto-commit: None, "sent", "done"
        self._prepare_deadline = 0
        now = consumer.now_ms
        self._last_poll_ms = now
        self._session_start_ms = now
        self._next_heartbeat_ms = now
        self._next_auto_commit_ms = now + self.config.auto_commit_interval_ms
        self._tick_entry = None
        self._tick_at: int | None = None

    # -- the application thread: poll -------------------------------------------------------
    def poll(self, now: int) -> None:
        """What KafkaConsumer.poll asks of the coordinator each time round."""
        self._last_poll_ms = now
        self._maybe_install_assignment()
        if self.coordinator is None:
            self._maybe_find_coordinator()
        elif self.consumer.subscriptions.auto_assigned:
            self._check_rejoin_conditions()
            if self.rejoin_needed and not self._join_in_flight and self.consumer.metadata.last_refresh_ms is not None:
                # onJoinPrepare may have to wait for its auto-commit: then the join goes next time.
                if not self.needs_join_prepare or self._on_join_prepare(now):
                    self._send_join()
        self._maybe_auto_commit(now)
        self._arm_tick()

    def is_stable(self) -> bool:
        return self.state == STABLE and self._pending_assignment is None and not self.rejoin_needed

    def request_rejoin(self, reason: str) -> None:
        if not self.rejoin_needed:
            self.rejoin_reason = reason
        self.rejoin_needed = True

    def _check_rejoin_conditions(self) -> None:
        subscriptions = self.consumer.subscriptions
        if self._joined_subscription is not None and sorted(subscriptions.topics) != self._joined_subscription:
            self.request_rejoin(f"subscription changed to {sorted(subscriptions.topics)}")
        if self._assignment_snapshot is not None and self.state == STABLE:
            now_counts = {t: self.consumer.metadata.partition_count(t) for t in self._group_topics}
            now_counts = {t: n for t, n in now_counts.items() if n}
            if now_counts != self._assignment_snapshot:
                self.request_rejoin(f"metadata changed since the leader assigned: {now_counts}")

    def _on_join_prepare(self, now: int) -> bool:
        """Auto-commit (waiting for it, up to the rebalance timeout), then give partitions up."""
        generation_valid = self.generation >= 0 and self.member_id != UNKNOWN_MEMBER_ID
        if self.config.enable_auto_commit and generation_valid and self._prepare_commit != "done":
            if self._prepare_commit is None:
                self._prepare_commit = "sent"
                self._prepare_deadline = now + self.config.max_poll_interval_ms
                self.commit(self.consumer.subscriptions.consumed_offsets(), self._on_prepare_commit)
            if self._prepare_commit != "done" and now < self._prepare_deadline:
                return False
        self._prepare_commit = None
        owned = list(self.consumer.subscriptions.assignment)
        self._owned_at_join = _names(owned)
        subscribed = set(self.consumer.subscriptions.topics)
        if not generation_valid:
            self._give_up(owned, lost=True, reason="generation or member id was reset")
        elif not self.cooperative:   # eager: the listener hears it even when nothing is owned
            self._give_up(owned, lost=False, reason="eager rebalance: every partition is revoked before rejoining",
                          always_call=True)
        else:
            gone = [tp for tp in owned if tp.topic not in subscribed]
            self._give_up(gone, lost=False, reason="no longer subscribed")
        self.needs_join_prepare = False
        return True

    def _on_prepare_commit(self, error: str | None) -> None:
        if error is None or error not in RETRIABLE_ERRORS:
            self._prepare_commit = "done"
        else:
            self._prepare_commit = None      # retriable: commit again on the next poll

    def _give_up(self, partitions: list[TopicPartition], *, lost: bool, reason: str,
                 always_call: bool = False) -> None:
        if not partitions:
            if always_call:
                self.consumer.invoke_listener("on_partitions_revoked", [], always=True)
            return
        subscriptions = self.consumer.subscriptions
        self.consumer.publish(ev.PartitionsRevoked(consumer=self.consumer.name, group=self.group_id,
                                                   partitions=_names(partitions), lost=lost, reason=reason))
        self.consumer.invoke_listener("on_partitions_lost" if lost else "on_partitions_revoked", sorted(partitions))
        subscriptions.assign([tp for tp in subscriptions.assignment if tp not in set(partitions)])

    def _maybe_install_assignment(self) -> None:
        """onJoinComplete: the assignment SyncGroup brought becomes the consumer's."""
        if self._pending_assignment is None:
            return
        generation, member_id, protocol, assigned = self._pending_assignment
        self._pending_assignment = None
        subscriptions = self.consumer.subscriptions
        if any(tp.topic not in subscriptions.topics for tp in assigned):
            self.request_rejoin("the assignment does not match the subscription")
        owned = list(subscriptions.assignment)
        previous = self._owned_at_join if self._owned_at_join is not None else _names(owned)
        self._owned_at_join = None
        revoked = [tp for tp in owned if tp not in set(assigned)]
        added = [tp for tp in assigned if tp not in set(owned)]
        if protocol == STICKY:
            self._sticky_memory = (list(assigned), generation)
        if revoked and self.cooperative:
            self._give_up(revoked, lost=False, reason="cooperative rebalance: moving to another member")
            self.request_rejoin("revoked partitions: a second rebalance hands them over")
        kept = [tp for tp in subscriptions.assignment if tp in set(assigned)]
        subscriptions.assign(kept + added)      # kept partitions keep their positions
        self.consumer.publish(ev.AssignmentReceived(
            consumer=self.consumer.name, group=self.group_id, member_id=member_id, generation=generation,
            protocol=protocol or "", assignment=_names(assigned), added=_names(added),
            revoked=_names(revoked) if self.cooperative else [], idle=not assigned, previous=previous))
        self.consumer.invoke_listener("on_partitions_assigned", sorted(added))
        if self.config.enable_auto_commit:
            self._next_auto_commit_ms = self.consumer.now_ms + self.config.auto_commit_interval_ms

    # -- coordinator discovery --------------------------------------------------------------
    def _maybe_find_coordinator(self) -> None:
        now = self.consumer.now_ms
        if self._find_in_flight or now < self._next_find_ms or not self.consumer.alive:
            return
        self._find_in_flight = True
        broker = self.consumer.least_loaded_broker()
        self.consumer.send(broker, FindCoordinatorRequest(self.group_id),
                           lambda answer: self._on_find_answer(broker, answer),
                           summary={"group": self.group_id})

    def _on_find_answer(self, broker: int, answer) -> None:
        self._find_in_flight = False
        if answer is None or answer.error != Errors.NONE:
            if answer is None:
                self.consumer.broker_unreachable(broker)
            self._find_failures += 1
            self._next_find_ms = self.consumer.now_ms + self.consumer.backoff_ms(self._find_failures)
            self._arm_tick(self._next_find_ms)
            # No answer: Kafka's lookup future fails with a DisconnectException (retriable).
            self._complete_lookup(Errors.COORDINATOR_NOT_AVAILABLE if answer is None else answer.error)
            return
        self._find_failures = 0
        self.coordinator = answer.node_id
        if self._last_coordinator != answer.node_id:
            self.consumer.publish(ev.CoordinatorDiscovered(consumer=self.consumer.name, group=self.group_id,
                                                           coordinator=answer.node_id,
                                                           previous=self._last_coordinator))
            self._last_coordinator = answer.node_id
        self._session_start_ms = self.consumer.now_ms
        self.consumer.wake()
        self._complete_lookup(None)

    def lookup_coordinator(self, then: Callable[[str | None], None]) -> None:
        """AbstractCoordinator.lookupCoordinator plus a listener: `then(None)` once a FindCoordinator
        answer names the coordinator, `then(error)` if that lookup fails. One lookup at a time; the
        listeners run in the order they were added. The lookup itself does not wait out the find
        backoff: Kafka's backs off only in ensureCoordinatorReady, between blocking attempts."""
        self._lookup_listeners.append(then)
        if not self._find_in_flight:
            self._next_find_ms = min(self._next_find_ms, self.consumer.now_ms)
            self._maybe_find_coordinator()

    def _complete_lookup(self, error: str | None) -> None:
        waiting, self._lookup_listeners = self._lookup_listeners, []
        for then in waiting:
            then(error)

    def ensure_coordinator(self) -> bool:
        """True once the coordinator is known; asks for it otherwise (for blocking calls)."""
        if self.coordinator is None:
            self._maybe_find_coordinator()
        return self.coordinator is not None

    def mark_coordinator_unknown(self, reason: str) -> None:
        if self.coordinator is None:
            return
        self.coordinator = None
        self._epoch += 1                   # answers still on their way from it are ignored
        self._join_in_flight = False
        if self.state in (PREPARING_REBALANCE, COMPLETING_REBALANCE):
            self.state = UNJOINED
            self.request_rejoin(f"coordinator lost during a rebalance: {reason}")
        self._next_find_ms = max(self._next_find_ms, self.consumer.now_ms)
        self.consumer.wake()
        self._maybe_find_coordinator()

    def _to_coordinator(self, request: object, on_answer: Callable, *, timeout_ms: int | None = None,
                        foreground: bool = True, summary: dict | None = None, stale_ok: bool = False) -> bool:
        if self.coordinator is None:
            return False
        epoch = self._epoch

        def answered(answer) -> None:
            if epoch != self._epoch and not stale_ok:
                return
            if answer is None and epoch == self._epoch:
                self.mark_coordinator_unknown("no answer from the coordinator")
            on_answer(answer)
        self.consumer.send(self.coordinator, request, answered, timeout_ms=timeout_ms, foreground=foreground,
                           summary={"group": self.group_id, **(summary or {})})
        return True

    # -- JoinGroup and SyncGroup ------------------------------------------------------------
    def _subscription_bytes(self, assignor: str) -> bytes:
        subscriptions = self.consumer.subscriptions
        owned = sorted(subscriptions.assignment)
        user_data = None
        if assignor == STICKY and self._sticky_memory is not None:
            user_data = encode_sticky_user_data(*self._sticky_memory)
        return encode_subscription(sorted(subscriptions.topics), owned, self.generation, user_data)

    def _send_join(self) -> None:
        self.state = PREPARING_REBALANCE
        self._join_in_flight = True
        self._joined_subscription = sorted(self.consumer.subscriptions.topics)
        protocols = [JoinGroupProtocol(name, self._subscription_bytes(name))
                     for name in self.config.partition_assignment_strategy]
        request = JoinGroupRequest(self.group_id, self.config.session_timeout_ms, self.config.max_poll_interval_ms,
                                   self.member_id, CONSUMER_PROTOCOL_TYPE, protocols, client_id=self.config.client_id,
                                   reason=self.rejoin_reason)
        timeout = max(self.config.request_timeout_ms, self.config.max_poll_interval_ms + JOIN_GROUP_TIMEOUT_LAPSE_MS)
        sent = self._to_coordinator(request, self._on_join_answer, timeout_ms=timeout, summary={
            "member_id": self.member_id, "protocols": list(self.config.partition_assignment_strategy),
            "reason": self.rejoin_reason})
        if not sent:
            self._join_in_flight = False

    def _on_join_answer(self, answer) -> None:
        self._join_in_flight = False
        if answer is None:
            self.state = UNJOINED
            return
        error = answer.error
        if error == Errors.NONE:
            self.member_id, self.generation = answer.member_id, answer.generation_id
            self.protocol = answer.protocol_name
            self.state = COMPLETING_REBALANCE
            self._session_start_ms = self._next_heartbeat_ms = self.consumer.now_ms
            if answer.leader == self.member_id:
                assignments = self._perform_assignment(answer)
            else:
                self._assignment_snapshot = None
                assignments = []
            self._send_sync(assignments)
            self._arm_tick()
        elif error == Errors.MEMBER_ID_REQUIRED:
            self.member_id = answer.member_id
            self._send_join()                # straight back, with the id (KIP-394)
        elif error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
            self.reset_generation(f"JoinGroup answered {error}", reset_member_id=error == Errors.UNKNOWN_MEMBER_ID)
        elif error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self.state = UNJOINED
            self.mark_coordinator_unknown(f"JoinGroup answered {error}")
        elif error in FATAL_JOIN_ERRORS:
            self.state = UNJOINED
            self.consumer.fail(error, f"JoinGroup failed: {error}")
        else:
            self.state = UNJOINED
        self.consumer.wake()

    def _perform_assignment(self, answer) -> list[SyncGroupAssignment]:
        """The leader runs the group's assignor over every member's subscription."""
        protocol = answer.protocol_name
        subscriptions = {m.member_id: decode_subscription(m.metadata).for_assignor(protocol) for m in answer.members}
        self._group_topics = {t for s in subscriptions.values() for t in s.topics}
        known = {t: self.consumer.metadata.partition_count(t) for t in sorted(self._group_topics)}
        counts = {t: n for t, n in known.items() if n}
        assignment = ASSIGNORS[protocol].assign(counts, subscriptions)
        self._assignment_snapshot = counts
        return [SyncGroupAssignment(member_id, encode_assignment(partitions))
                for member_id, partitions in assignment.items()]

    def _send_sync(self, assignments: list[SyncGroupAssignment]) -> None:
        self._join_in_flight = True
        generation = self.generation
        request = SyncGroupRequest(self.group_id, generation, self.member_id, CONSUMER_PROTOCOL_TYPE, self.protocol,
                                   assignments)
        summary = {"member_id": self.member_id, "generation_id": generation}
        if assignments:
            summary["assignments"] = {a.member_id: [str(tp) for tp in decode_assignment(a.assignment)]
                                      for a in assignments}
        if not self._to_coordinator(request, lambda answer: self._on_sync_answer(generation, answer),
                                    timeout_ms=self.config.request_timeout_ms, summary=summary):
            self._join_in_flight = False

    def _on_sync_answer(self, generation: int, answer) -> None:
        self._join_in_flight = False
        if answer is None:
            self.state = UNJOINED
            return
        error = answer.error
        if error == Errors.NONE:
            self.state = STABLE
            self.rejoin_needed = False
            self.needs_join_prepare = True
            self._session_start_ms = self.consumer.now_ms
            self._pending_assignment = (generation, self.member_id, self.protocol, decode_assignment(answer.assignment))
        elif error == Errors.REBALANCE_IN_PROGRESS:
            self.state = UNJOINED
            self.request_rejoin("SyncGroup answered REBALANCE_IN_PROGRESS")
        elif error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
            self.reset_generation(f"SyncGroup answered {error}", reset_member_id=error == Errors.UNKNOWN_MEMBER_ID)
        elif error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self.state = UNJOINED
            self.mark_coordinator_unknown(f"SyncGroup answered {error}")
        else:
            self.state = UNJOINED
            self.request_rejoin(f"SyncGroup answered {error}")
        self.consumer.wake()

    def reset_generation(self, reason: str, *, reset_member_id: bool) -> None:
        """resetStateAndRejoin: out of the generation; what it owns will count as lost."""
        self.state = UNJOINED
        self.generation = -1
        if reset_member_id:
            self.member_id = UNKNOWN_MEMBER_ID
        self.request_rejoin(reason)
        self.needs_join_prepare = True

    # -- the heartbeat thread ---------------------------------------------------------------
    def _arm_tick(self, at: int | None = None) -> None:
        """Wake the background at the next moment something is due (only ever earlier)."""
        if not self.consumer.alive or self.consumer.closed:
            return
        now = self.consumer.now_ms
        if at is None:
            at = self._next_due(now)
            if at is None:
                return
        at = max(at, now)
        if self._tick_at is not None and self._tick_at <= at and self._tick_entry is not None \
                and not self._tick_entry.cancelled:
            return
        self.consumer.cancel(self._tick_entry)
        self._tick_at = at
        self._tick_entry = self.consumer.schedule(at - now, self._tick, "heartbeat thread")

    def _next_due(self, now: int) -> int | None:
        """When the background has something to do next (None: nothing until an answer comes)."""
        if self.coordinator is None:
            return None if self._find_in_flight else max(now, self._next_find_ms)
        if self.state not in (COMPLETING_REBALANCE, STABLE):
            return None
        return min(self._next_heartbeat_ms, self._session_start_ms + self.config.session_timeout_ms,
                   self._last_poll_ms + self.config.max_poll_interval_ms)

    def _tick(self) -> None:
        self._tick_entry = self._tick_at = None
        now = self.consumer.now_ms
        if self.coordinator is None:
            self._maybe_find_coordinator()
        elif self.state in (COMPLETING_REBALANCE, STABLE):
            if now - self._session_start_ms >= self.config.session_timeout_ms:
                self.mark_coordinator_unknown("session timed out without receiving a heartbeat response")
            elif not self.consumer.in_poll and now - self._last_poll_ms >= self.config.max_poll_interval_ms:
                self.maybe_leave_group("consumer poll timeout has expired.")
            elif now >= self._next_heartbeat_ms:
                self._next_heartbeat_ms = now + self.config.heartbeat_interval_ms
                self._send_heartbeat()
        self._arm_tick()

    def _send_heartbeat(self) -> None:
        generation, member_id = self.generation, self.member_id
        request = HeartbeatRequest(self.group_id, generation, member_id)
        self._to_coordinator(request, lambda answer: self._on_heartbeat_answer(generation, member_id, answer),
                             timeout_ms=self.config.request_timeout_ms, foreground=False,
                             summary={"member_id": member_id, "generation_id": generation})

    def _on_heartbeat_answer(self, generation: int, member_id: str, answer) -> None:
        now = self.consumer.now_ms
        if answer is None:
            self._next_heartbeat_ms = now + self.config.retry_backoff_ms
            return
        error = answer.error
        unchanged = generation == self.generation and member_id == self.member_id
        if error == Errors.NONE:
            self._session_start_ms = now
        elif error == Errors.REBALANCE_IN_PROGRESS:
            self._session_start_ms = now     # keep heartbeating while the group rebalances
            if self.state == STABLE:
                self.request_rejoin("group is already rebalancing")
                self.consumer.wake()
        elif error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self.mark_coordinator_unknown(f"Heartbeat answered {error}")
        elif error in (Errors.ILLEGAL_GENERATION, Errors.UNKNOWN_MEMBER_ID) and unchanged:
            self.reset_generation(f"Heartbeat answered {error}", reset_member_id=error != Errors.ILLEGAL_GENERATION)
            self.consumer.wake()
        else:
            self._next_heartbeat_ms = now + self.config.retry_backoff_ms

    # -- leaving ----------------------------------------------------------------------------
    def maybe_leave_group(self, reason: str) -> None:
        """Send LeaveGroup (best effort, no retry) and forget the generation and member id."""
        if self.state != UNJOINED and self.member_id and self.coordinator is not None:
            self.consumer.publish(ev.ConsumerLeftGroup(consumer=self.consumer.name, group=self.group_id,
                                                       member_id=self.member_id, reason=reason))
            request = LeaveGroupRequest(self.group_id, [MemberIdentity(self.member_id, reason=reason)])
            self._to_coordinator(request, lambda answer: self.consumer.wake(), stale_ok=True,
                                 timeout_ms=self.config.request_timeout_ms,
                                 summary={"member_id": self.member_id, "reason": reason})
        self.reset_generation(reason, reset_member_id=True)

    def on_leave_prepare(self) -> None:
        """Before leaving on close/unsubscribe: revoke (or lose) what it owns, calling the listener."""
        owned = list(self.consumer.subscriptions.assignment)
        generation_valid = self.generation >= 0 and self.member_id != UNKNOWN_MEMBER_ID
        self._give_up(owned, lost=not generation_valid, reason="leaving the group")

    # -- offsets ----------------------------------------------------------------------------
    def commit(self, offsets: dict[TopicPartition, tuple[int, int]], callback: Callable[[str | None], None], *,
               quiet_retriable: bool = False) -> None:
        """OffsetCommit; `callback(None)` on success or `callback(error name)`. Outside a stable
        generation a group member cannot commit (REBALANCE_IN_PROGRESS / COMMIT_FAILED). Failures
        are events, except retriable ones when `quiet_retriable` (an auto-commit just tries again)."""
        def failed(error: str) -> None:
            if not (quiet_retriable and error in RETRIABLE_ERRORS):
                self.consumer.publish(ev.OffsetCommitFailed(
                    consumer=self.consumer.name, group=self.group_id, error=error,
                    offsets={str(tp): o for tp, (o, _) in sorted(offsets.items())}))
            callback(error)
        if not offsets:
            callback(None)
            return
        if self.coordinator is None:
            # ConsumerCoordinator.commitOffsetsAsync: look the coordinator up, then commit. A failed
            # lookup fails the commit (RetriableCommitFailedException) and nothing is retried, so
            # commits never arrive out of order.
            self.lookup_coordinator(
                lambda error: failed(error) if error else self._send_commit(offsets, callback, failed))
            return
        self._send_commit(offsets, callback, failed)

    def _send_commit(self, offsets: dict[TopicPartition, tuple[int, int]], callback: Callable[[str | None], None],
                     failed: Callable[[str], None]) -> None:
        """sendOffsetCommitRequest: the generation as it stands when the request goes out."""
        if self.consumer.subscriptions.auto_assigned:
            if self.state != STABLE:
                failed(Errors.REBALANCE_IN_PROGRESS if self.state in (PREPARING_REBALANCE, COMPLETING_REBALANCE)
                       else Errors.COMMIT_FAILED)
                return
            generation, member_id = self.generation, self.member_id
        else:
            generation, member_id = -1, UNKNOWN_MEMBER_ID
        if self.coordinator is None:   # lost again since the lookup
            failed(Errors.COORDINATOR_NOT_AVAILABLE)
            return
        parts = [OffsetCommitPartition(tp.topic, tp.partition, offset, epoch)
                 for tp, (offset, epoch) in sorted(offsets.items())]
        request = OffsetCommitRequest(self.group_id, generation, member_id, parts)
        self._to_coordinator(request, lambda answer: self._on_commit_answer(generation, answer, callback, failed),
                             timeout_ms=self.config.request_timeout_ms, stale_ok=True,
                             summary={"member_id": member_id, "generation_id": generation,
                                      "offsets": {str(tp): o for tp, (o, _) in sorted(offsets.items())}})

    def _on_commit_answer(self, generation: int, answer, callback, failed) -> None:
        error = Errors.REQUEST_TIMED_OUT if answer is None else answer.error
        if error == Errors.NONE:
            callback(None)
            return
        if error in (Errors.COORDINATOR_NOT_AVAILABLE, Errors.NOT_COORDINATOR):
            self.mark_coordinator_unknown(f"OffsetCommit answered {error}")
        elif error in (Errors.UNKNOWN_MEMBER_ID, Errors.ILLEGAL_GENERATION):
            if generation == self.generation:
                self.reset_generation(f"OffsetCommit answered {error}",
                                      reset_member_id=error == Errors.UNKNOWN_MEMBER_ID)
            error = Errors.COMMIT_FAILED
        elif error == Errors.REBALANCE_IN_PROGRESS:
            self.request_rejoin("OffsetCommit answered REBALANCE_IN_PROGRESS")
        failed(error)

    def _maybe_auto_commit(self, now: int) -> None:
        if not self.config.enable_auto_commit or now < self._next_auto_commit_ms:
            return
        if self.coordinator is None:       # Java waits for the coordinator, retry.backoff.ms at a time
            self._next_auto_commit_ms = now + self.config.retry_backoff_ms
            return
        self._next_auto_commit_ms = now + self.config.auto_commit_interval_ms
        if self.consumer.subscriptions.auto_assigned and self.state != STABLE:
            return     # Java tries and fails with a rebalance in progress; nothing would be committed

        def done(error: str | None) -> None:
            if error in RETRIABLE_ERRORS:
                self._next_auto_commit_ms = self.consumer.now_ms + self.config.retry_backoff_ms
        self.commit(self.consumer.subscriptions.consumed_offsets(), done, quiet_retriable=True)

    def fetch_committed(self, partitions: list[TopicPartition], callback: Callable[[object], None]) -> bool:
        """OffsetFetch; `callback(answer or None)`. False if no coordinator is known yet."""
        request = OffsetFetchRequest(self.group_id, [(tp.topic, tp.partition) for tp in partitions])
        return self._to_coordinator(request, callback, timeout_ms=self.config.request_timeout_ms, stale_ok=True,
                                    summary={"partitions": _names(partitions)})
