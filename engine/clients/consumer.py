"""The consumer: Kafka's KafkaConsumer on the lab's virtual time.

    consumer = cluster.consumer("c1", {"group.id": "g", "auto.offset.reset": "earliest"})
    consumer.subscribe(["t"])                  # or subscribe(pattern="t.*"), or assign([...])
    records = consumer.poll(timeout_ms=5000)   # runs the cluster until records come, or 5 s pass
    consumer.commit_sync()
    consumer.close()                           # LeaveGroup; consumer.crash() just stops

A client node `consumer-<name>` on the simulated network, with Kafka's configs and defaults
(consumer_state.ConsumerConfig). Its parts: the group coordinator client (consumer_group.py),
the fetcher (consumer_fetcher.py) and its metadata. Like the Java client it works only when
the application calls poll(): that is when it joins or rejoins a group, calls the rebalance
listener, auto-commits and hands records out; heartbeats, SyncGroup and fetch answers run in
the background (timers on the cluster's scheduler).

Blocking calls (poll, commit_sync, position, committed, close) run the cluster's scheduler
until they are done, as an application thread would wait. They must be called from outside the
simulation (a test, a scenario step) — never from a scheduled action; an application loop
running *inside* the simulation uses `poll_once` and `commit_async` (see consumer_app.py).
"""
from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import Any

from engine import events as ev
from engine.clients.consumer_fetcher import Fetcher
from engine.clients.consumer_group import STABLE, ConsumerCoordinator
from engine.clients.consumer_state import (
    RETRIABLE_ERRORS,
    CommitFailedError,
    ConsumedRecord,
    ConsumerConfig,
    ConsumerMetadata,
    ConsumerTimeoutError,
    IllegalStateError,
    KafkaClientError,
    NoOffsetForPartitionError,
    RebalanceInProgressError,
    SubscriptionState,
    as_dicts,
    as_topic_partition,
)
from engine.common.errors import Errors
from engine.groups.assignors import TopicPartition
from engine.groups.protocol import EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, ListOffsetsPartition, ListOffsetsRequest
from engine.node import Node, World
from engine.protocol import MetadataRequest
from engine.topic_pattern import TopicPattern

DEFAULT_POLL_TIMEOUT_MS = 1000
ERRORS: dict[str, type[KafkaClientError]] = {
    Errors.COMMIT_FAILED: CommitFailedError, Errors.REBALANCE_IN_PROGRESS: RebalanceInProgressError,
    Errors.NO_OFFSET_FOR_PARTITION: NoOffsetForPartitionError}


# A blocking call's wait condition, bound to the answer list of its own loop turn (not to the loop's
# variable, B023): an answer arriving late for an earlier turn lands in that turn's list and is ignored.
def _has_any(answers: list) -> Callable[[], bool]:
    return lambda: bool(answers)


def _has_count(answers: list, count: int) -> Callable[[], bool]:
    return lambda: len(answers) == count


class Consumer:
    def __init__(self, world: World, name: str, config: dict | None = None, *, bootstrap: list[int],
                 apps: dict | None = None) -> None:
        """A client node "consumer-<name>" in `world`. `bootstrap` is its bootstrap.servers: the
        broker ids it asks until a MetadataResponse names the cluster's brokers. `apps`, if given,
        is where an application driving it (consumer_app.PollLoop) is kept by name (the facade's)."""
        self.name = name
        self.node = f"consumer-{name}"
        self.bootstrap = sorted(bootstrap)
        self.apps = apps
        self.config = ConsumerConfig.from_dict(dict(config or {}), default_client_id=name)
        self.group_id = self.config.group_id
        self.client = Node(world, self.node)
        self.alive = True                        # False once crashed (closed is a clean stop)
        self.closed = False
        self.in_poll = False
        self.subscriptions = SubscriptionState()
        self.metadata = ConsumerMetadata()
        self.fetcher = Fetcher(self)
        self.coordinator = ConsumerCoordinator(self, self.group_id) if self.group_id else None
        self.app = None                          # a consumer_app.PollLoop driving it, if any
        self._consumed: list[ConsumedRecord] = []
        self._woken = False
        self._failure: KafkaClientError | None = None
        self._bootstrap_index = 0

    # -- plumbing the parts share -----------------------------------------------------------
    @property
    def now_ms(self) -> int:
        return self.client.now_ms

    def publish(self, event: ev.Event) -> None:
        self.client.publish(event)

    def schedule(self, delay_ms: int, action: Callable[[], None], label: str, *, foreground: bool = False):
        """A timer of this consumer's process: dropped if it crashes or is closed first."""
        return self.client.schedule(delay_ms, action, label, foreground=foreground, guard=self._open)

    def _open(self) -> bool:
        return not self.closed

    def cancel(self, entry) -> None:
        self.client.cancel(entry)

    def wake(self) -> None:
        """Something the application may be waiting for happened (a blocking call re-checks)."""
        self._woken = True

    def fail(self, kafka_name: str, message: str) -> None:
        """A fatal error: the next poll() raises it."""
        self._failure = ERRORS.get(kafka_name, KafkaClientError)(message, kafka_name)
        self.wake()

    def send(self, broker_id: int, request: object, on_answer: Callable[[object | None], None], *,
             timeout_ms: int | None = None, foreground: bool = True, summary: dict | None = None) -> None:
        """A request to a broker; `on_answer(None)` on a time-out. A broker whose process is down
        refuses the connection at once (the client's OS says so), after retry.backoff.ms."""
        if not self.alive or self.closed:
            return
        client = self.client
        incarnation = client.incarnation

        def answered(answer: object | None) -> None:
            if client.alive and client.incarnation == incarnation:
                self.wake()
                on_answer(answer)
        destination = f"broker-{broker_id}"
        if not client.is_up(destination):
            self.schedule(self.config.retry_backoff_ms, lambda: answered(None),
                          f"connection to broker {broker_id} refused", foreground=foreground)
            return
        client.send(destination, request, answered, timeout_ms=timeout_ms or self.config.request_timeout_ms,
                    summary=summary, foreground=foreground)

    def least_loaded_broker(self) -> int:
        """A broker to ask for metadata or the coordinator: the known brokers (at first, the
        bootstrap list) in turn."""
        brokers = self.metadata.brokers or self.bootstrap
        return brokers[self._bootstrap_index % len(brokers)]

    def broker_unreachable(self, broker_id: int) -> None:
        self._bootstrap_index += 1

    def backoff_ms(self, failures: int) -> int:
        """retry.backoff.ms doubled per consecutive failure, up to retry.backoff.max.ms (KIP-580,
        without the random jitter)."""
        return min(self.config.retry_backoff_ms * (2 ** max(0, failures - 1)), self.config.retry_backoff_max_ms)

    def invoke_listener(self, method: str, partitions: list[TopicPartition], *, always: bool = False) -> None:
        """Call the rebalance listener; with an empty list only for on_partitions_assigned (Java calls it
        after every rebalance) or when `always` (an eager revocation)."""
        listener = self.subscriptions.listener
        if listener is None or (not partitions and not always and method != "on_partitions_assigned"):
            return
        callback = getattr(listener, method, None)
        if callback is None and method == "on_partitions_lost":
            callback = getattr(listener, "on_partitions_revoked", None)   # Java's default
        if callback is not None:
            callback(list(partitions))

    # -- subscribing --------------------------------------------------------------------------
    def subscribe(self, topics: Iterable[str] | None = None, *, pattern: str | re.Pattern | None = None,
                  listener: Any = None) -> None:
        """Join the group for `topics`, or for every topic matching `pattern` (full match; internal
        topics excluded). `listener` may define on_partitions_revoked / _assigned / _lost(partitions)."""
        self._check_usable()
        if self.coordinator is None:
            raise KafkaClientError("To use the group management or offset commit APIs, you must provide a "
                                   "valid group.id in the consumer configuration.", Errors.INVALID_GROUP_ID)
        if self.subscriptions.mode == "assigned":
            raise IllegalStateError("Subscription to topics, partitions and pattern are mutually exclusive")
        if (topics is None) == (pattern is None):
            raise ValueError("subscribe() takes a list of topics or a pattern")
        if pattern is not None:
            self.subscriptions.mode = "pattern"
            # A pattern from a learner (a str) is run by a linear-time automaton, never by re:
            # re backtracks, and (a|aa)+b against a long topic name holds the whole process.
            self.subscriptions.pattern = TopicPattern(pattern, per_name=True) if isinstance(pattern, str) else pattern
            self.subscriptions.topics = self._matching_topics()
        elif topics is not None:    # exactly one of topics and pattern is given (checked above)
            topics = sorted(set(topics))
            if not topics:
                self.unsubscribe()
                return
            self.subscriptions.mode, self.subscriptions.pattern = "topics", None
            self.subscriptions.topics = topics
        self.subscriptions.listener = listener
        self.metadata.need_update = True

    def _matching_topics(self) -> list[str]:
        return sorted(t for t in self.metadata.partitions
                      if self.subscriptions.matches_pattern(t, self.config.exclude_internal_topics))

    def assign(self, partitions: Iterable) -> None:
        """Read these partitions, outside any group management (assign())."""
        self._check_usable()
        if self.subscriptions.auto_assigned:
            raise IllegalStateError("Subscription to topics, partitions and pattern are mutually exclusive")
        wanted = [as_topic_partition(tp) for tp in partitions]
        for tp in list(self.subscriptions.assignment):
            if tp not in wanted:
                self.fetcher.drop_buffered(tp)
        self.subscriptions.mode = "assigned" if wanted else None
        self.subscriptions.topics = sorted({tp.topic for tp in wanted})
        self.subscriptions.assign(wanted)
        self.metadata.need_update = True

    def unsubscribe(self) -> None:
        if self.coordinator is not None and self.subscriptions.auto_assigned:
            self.coordinator.on_leave_prepare()
            self.coordinator.maybe_leave_group("the consumer unsubscribed from all topics")
        for tp in list(self.subscriptions.assignment):
            self.fetcher.drop_buffered(tp)
        self.subscriptions = SubscriptionState()

    def subscription(self) -> set[str]:
        return set(self.subscriptions.topics) if self.subscriptions.auto_assigned else set()

    def assignment(self) -> set[TopicPartition]:
        return set(self.subscriptions.assignment)

    # -- polling ------------------------------------------------------------------------------
    def poll(self, max_records: int | None = None, timeout_ms: int = DEFAULT_POLL_TIMEOUT_MS) -> list[ConsumedRecord]:
        """Records, or an empty list once `timeout_ms` of virtual time passed without any. The
        cluster runs meanwhile (this is the application blocking in poll)."""
        deadline = self.now_ms + timeout_ms
        self.in_poll = True
        try:
            while True:
                records = self.poll_once(max_records)
                if records or self.now_ms >= deadline:
                    return records
                self._run_until_woken(deadline)
        finally:
            self.in_poll = False

    def poll_once(self, max_records: int | None = None) -> list[ConsumedRecord]:
        """One round of poll() at the current instant, without waiting: group work, offsets,
        buffered records out, next fetches in flight. For code running inside the simulation."""
        self._check_usable()
        self._woken = False
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure
        if self.subscriptions.mode is None:
            raise IllegalStateError("Consumer is not subscribed to any topics or assigned any partitions")
        if self.coordinator is not None:
            self.coordinator.poll(self.now_ms)
        self._maybe_update_metadata()
        self.fetcher.update_positions()
        records = self.fetcher.collect(max_records or self.config.max_poll_records)
        self.fetcher.send_fetches()
        if records:
            self._consumed.extend(records)
            self.publish(ev.RecordsConsumed(consumer=self.name, group=self.group_id,
                                            records=as_dicts(records)))
        return records

    def _run_until_woken(self, deadline: int, done: Callable[[], bool] | None = None) -> None:
        """Run the world's scheduler until something woke the application, `done()`, or `deadline`."""
        self.client.world.scheduler.run(until_ms=deadline,
                                        stop=lambda: self._woken or (done is not None and done()))

    def _wait(self, done: Callable[[], bool], timeout_ms: int, what: str) -> None:
        """Block (run the cluster) until `done()`, polling the group meanwhile as Java's blocking calls do."""
        deadline = self.now_ms + timeout_ms
        self.in_poll = True
        try:
            while not done():
                if self.now_ms >= deadline:
                    raise ConsumerTimeoutError(f"Timeout of {timeout_ms} ms expired before {what}")
                self._woken = False
                self._run_until_woken(deadline, done)
        finally:
            self.in_poll = False

    # -- metadata -----------------------------------------------------------------------------
    def _maybe_update_metadata(self) -> None:
        m = self.metadata
        now = self.now_ms
        due = m.need_update or m.last_refresh_ms is None or now - m.last_refresh_ms >= self.config.metadata_max_age_ms
        if not due or m.in_flight or now < m.next_attempt_ms:
            return
        m.in_flight = True
        broker = self.least_loaded_broker()
        self.send(broker, MetadataRequest(None), lambda answer: self._on_metadata(broker, answer),
                  foreground=False, summary={"topics": "all"})

    def _on_metadata(self, broker: int, answer) -> None:
        m = self.metadata
        m.in_flight = False
        if answer is None:
            self.broker_unreachable(broker)
            m.next_attempt_ms = self.now_ms + self.config.retry_backoff_ms
            return
        m.brokers = list(answer.brokers) or m.brokers
        m.partitions = {t.topic: list(t.partitions) for t in answer.topics if t.error == Errors.NONE}
        m.last_refresh_ms, m.need_update = self.now_ms, False
        m.version += 1
        if self.subscriptions.mode == "pattern":
            self.subscriptions.topics = self._matching_topics()
        elif self.subscriptions.mode == "topics" and any(t not in m.partitions for t in self.subscriptions.topics):
            # Metadata.handleMetadataResponse: a subscribed topic the answer lacks (Kafka's consumer asks
            # for it and gets UNKNOWN_TOPIC_OR_PARTITION, an InvalidMetadataException) asks for another
            # update after retry.backoff.ms. In KRaft a broker's metadata may lag the controller's:
            # a topic just created may not be in that broker's image yet.
            m.need_update = True
            m.next_attempt_ms = self.now_ms + self.config.retry_backoff_ms

    # -- offsets ------------------------------------------------------------------------------
    def commit_async(self, offsets: dict | None = None,
                     callback: Callable[[str | None, dict], None] | None = None) -> None:
        """Commit `offsets` ({partition: next offset to read}) or, by default, every position.
        `callback(error name or None, offsets)` comes later; nothing is retried."""
        self._check_usable()
        coordinator = self._require_group()
        to_commit = self._offsets_arg(offsets)
        coordinator.commit(to_commit, lambda error: callback(error, to_commit) if callback else None)

    def commit_sync(self, offsets: dict | None = None, timeout_ms: int | None = None) -> None:
        """Commit and wait; retriable errors are retried until default.api.timeout.ms.
        Raises CommitFailedError when this member is no longer in the generation."""
        self._check_usable()
        coordinator = self._require_group()
        to_commit = self._offsets_arg(offsets)
        timeout = self.config.default_api_timeout_ms if timeout_ms is None else timeout_ms
        deadline = self.now_ms + timeout
        while True:
            result: list[str | None] = []
            coordinator.commit(to_commit, result.append)
            self._wait(_has_any(result), max(0, deadline - self.now_ms), "the offsets were committed")
            error = result[0]
            if error is None:
                return
            if error not in RETRIABLE_ERRORS or self.now_ms >= deadline:
                raise ERRORS.get(error, KafkaClientError)(f"Commit failed: {error}", error)
            self._wait(coordinator.ensure_coordinator, max(0, deadline - self.now_ms),
                       "the coordinator was found")

    def _offsets_arg(self, offsets: dict | None) -> dict[TopicPartition, tuple[int, int]]:
        if offsets is None:
            return self.subscriptions.consumed_offsets()
        out = {}
        for tp, offset in offsets.items():
            tp = as_topic_partition(tp)
            out[tp] = tuple(offset) if isinstance(offset, (tuple, list)) else (int(offset), -1)
        return out

    def committed(self, partitions: Iterable, timeout_ms: int | None = None) -> dict[TopicPartition, int | None]:
        """The group's committed offsets (None where nothing is committed); waits for the answer."""
        self._check_usable()
        coordinator = self._require_group()
        wanted = [as_topic_partition(tp) for tp in partitions]
        timeout = self.config.default_api_timeout_ms if timeout_ms is None else timeout_ms
        deadline = self.now_ms + timeout
        while True:
            answers: list[Any] = []    # the OffsetFetchResponse, or None on a time-out
            self._wait(coordinator.ensure_coordinator, max(0, deadline - self.now_ms), "the coordinator was found")
            if coordinator.fetch_committed(wanted, answers.append):
                self._wait(_has_any(answers), max(0, deadline - self.now_ms), "the committed offsets were fetched")
                if answers[0] is not None and answers[0].error == Errors.NONE:
                    found = {TopicPartition(p.topic, p.partition): p.committed_offset for p in answers[0].partitions}
                    return {tp: (found[tp] if found.get(tp, -1) >= 0 else None) for tp in wanted}

    def _require_group(self) -> ConsumerCoordinator:
        if self.coordinator is None:
            raise KafkaClientError("To use the group management or offset commit APIs, you must provide a "
                                   "valid group.id in the consumer configuration.", Errors.INVALID_GROUP_ID)
        return self.coordinator

    # -- positions ----------------------------------------------------------------------------
    def position(self, partition, timeout_ms: int | None = None) -> int:
        """The offset of the next record poll() will hand out (waits for it to be known)."""
        tp = as_topic_partition(partition)
        state = self._assigned(tp)
        timeout = self.config.default_api_timeout_ms if timeout_ms is None else timeout_ms

        def known() -> bool:
            if state.position is None:
                if self.coordinator is not None:
                    self.coordinator.ensure_coordinator()
                self._maybe_update_metadata()
                self.fetcher.update_positions()
            return state.position is not None
        self._wait(known, timeout, f"the position for partition {tp} could be determined")
        return state.position

    def seek(self, partition, offset: int) -> None:
        tp = as_topic_partition(partition)
        state = self._assigned(tp)
        if offset < 0:
            raise ValueError(f"seek offset must not be a negative number, got {offset}")
        state.position, state.position_epoch, state.reset_strategy = int(offset), -1, None
        self.fetcher.drop_buffered(tp)
        self.publish(ev.OffsetsReset(consumer=self.name, topic=tp.topic, partition=tp.partition, strategy="seek",
                                     offset=int(offset)))

    def seek_to_beginning(self, partitions: Iterable | None = None) -> None:
        for tp in self._partitions_arg(partitions):
            self.fetcher.reset_to(tp, "earliest")

    def seek_to_end(self, partitions: Iterable | None = None) -> None:
        for tp in self._partitions_arg(partitions):
            self.fetcher.reset_to(tp, "latest")

    def pause(self, partitions: Iterable) -> None:
        for tp in self._partitions_arg(partitions):
            self.subscriptions.assignment[tp].paused = True

    def resume(self, partitions: Iterable) -> None:
        for tp in self._partitions_arg(partitions):
            self.subscriptions.assignment[tp].paused = False

    def paused(self) -> set[TopicPartition]:
        return {tp for tp, s in self.subscriptions.assignment.items() if s.paused}

    def beginning_offsets(self, partitions: Iterable, timeout_ms: int | None = None) -> dict[TopicPartition, int]:
        """The log start offset of each partition (ListOffsets -2)."""
        found = self._list_offsets(partitions, EARLIEST_TIMESTAMP, timeout_ms)
        return {tp: offset for tp, (offset, _) in found.items()}

    def end_offsets(self, partitions: Iterable, timeout_ms: int | None = None) -> dict[TopicPartition, int]:
        """The high watermark of each partition (ListOffsets -1 as read_uncommitted sees it)."""
        found = self._list_offsets(partitions, LATEST_TIMESTAMP, timeout_ms)
        return {tp: offset for tp, (offset, _) in found.items()}

    def offsets_for_times(self, timestamps: dict, timeout_ms: int | None = None) -> dict[TopicPartition, tuple | None]:
        """For each partition, (offset, timestamp) of the first record at or after the time, or None."""
        out = {}
        for tp, ts in timestamps.items():
            offset, timestamp = self._list_offsets([tp], int(ts), timeout_ms)[as_topic_partition(tp)]
            out[as_topic_partition(tp)] = None if offset < 0 else (offset, timestamp)
        return out

    def _list_offsets(self, partitions: Iterable, timestamp: int,
                      timeout_ms: int | None) -> dict[TopicPartition, tuple[int, int]]:
        """ListOffsets to each partition's leader, waiting; refreshes metadata until leaders answer."""
        self._check_usable()
        wanted = [as_topic_partition(tp) for tp in partitions]
        deadline = self.now_ms + (self.config.default_api_timeout_ms if timeout_ms is None else timeout_ms)
        found: dict[TopicPartition, tuple[int, int]] = {}
        while len(found) < len(wanted):
            if self.metadata.need_update or self.metadata.last_refresh_ms is None:
                self.metadata.need_update = True
                self._maybe_update_metadata()
                self._wait(lambda: not self.metadata.in_flight, max(0, deadline - self.now_ms), "metadata arrived")
            answers: list[Any] = []    # ListOffsetsResponses, or None on a time-out
            sent = 0
            for tp in wanted:
                leader, epoch = self.metadata.leader(tp)
                if tp not in found and leader >= 0:
                    query = ListOffsetsPartition(tp.topic, tp.partition, timestamp, epoch)
                    self.send(leader, ListOffsetsRequest(-1, 0, [query]), answers.append,
                              summary={"partition": str(tp), "timestamp": timestamp})
                    sent += 1
            self._wait(_has_count(answers, sent), max(0, deadline - self.now_ms), "the offsets were listed")
            for answer in answers:
                for p in getattr(answer, "partitions", None) or []:
                    if p.error == Errors.NONE:
                        found[TopicPartition(p.topic, p.partition)] = (p.offset, p.timestamp)
            if len(found) < len(wanted):
                self.metadata.need_update = True
        return found

    def _partitions_arg(self, partitions: Iterable | None) -> list[TopicPartition]:
        if partitions is None:
            return list(self.subscriptions.assignment)
        out = [as_topic_partition(tp) for tp in partitions]
        for tp in out:
            self._assigned(tp)
        return out

    def _assigned(self, tp: TopicPartition):
        state = self.subscriptions.assignment.get(tp)
        if state is None:
            raise IllegalStateError(f"No current assignment for partition {tp}")
        return state

    # -- what the lab shows -------------------------------------------------------------------
    def records_consumed(self) -> list[dict]:
        """Everything poll() has returned so far, in order."""
        return as_dicts(self._consumed)

    @property
    def member_id(self) -> str:
        return self.coordinator.member_id if self.coordinator else ""

    def is_stable(self) -> bool:
        """In a stable generation with its assignment installed (a group consumer's "joined")."""
        return self.coordinator is not None and self.coordinator.is_stable()

    # -- ending -------------------------------------------------------------------------------
    def close(self, timeout_ms: int = 30000) -> None:
        """Auto-commit (if enabled), revoke, LeaveGroup, and wait for the answers (up to timeout_ms)."""
        if self.closed or not self.alive:
            return
        if self.app is not None:
            self.app.stop()
        if self.coordinator is not None and self.subscriptions.auto_assigned:
            if self.config.enable_auto_commit and self.coordinator.state == STABLE:
                try:
                    self.commit_sync(timeout_ms=timeout_ms)
                except KafkaClientError:
                    pass
            self.coordinator.on_leave_prepare()
            self.coordinator.maybe_leave_group("the consumer is being closed")
            try:
                self._wait(lambda: self.client.in_flight() == 0, timeout_ms, "the consumer closed")
            except ConsumerTimeoutError:
                pass
        self.closed = True
        self.client.go_down()

    def crash(self) -> None:
        """The process dies: no LeaveGroup, no commit; the coordinator notices by the session timeout."""
        if not self.alive:
            return
        self.alive = False
        if self.app is not None:
            self.app.stop()
        self.client.go_down()
        self.publish(ev.ConsumerCrashed(consumer=self.name, group=self.group_id))

    def _check_usable(self) -> None:
        if not self.alive:
            raise IllegalStateError(f"Consumer {self.name} has crashed")
        if self.closed:
            raise IllegalStateError("This consumer has already been closed.")


__all__ = ["Consumer", "ConsumedRecord", "CommitFailedError", "RebalanceInProgressError",
           "NoOffsetForPartitionError", "IllegalStateError", "KafkaClientError"]
