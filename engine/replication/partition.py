"""One replica of one topic-partition, on one broker: its log and what it knows of the others.

As **leader** it keeps, per follower, the LEO learnt from that follower's fetch offset and the
last time the follower was caught up, and derives from them (Kafka's rules, see the reference):
- the ISR shrinks when a follower is not caught up (LEO != leader LEO) for longer than
  `replica.lag.time.max.ms`, and grows back when a follower's LEO reaches the leader's HW (and
  the start of the leader's current epoch);
- HW = min LEO over the ISR (plus replicas that caught up within the lag time), only forward,
  and not at all while the ISR is smaller than `min.insync.replicas` (Kafka 3.7+);
- acks=all produce requests wait until HW passes their last offset; then NONE, or
  NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR fell below min.insync.replicas meanwhile.
As **follower** it appends the leader's batches as they are, takes the HW the leader sends
(clamped to its own LEO), and truncates when told to.
ISR changes are written to the metadata store by the leader, as in ZooKeeper mode.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine import events as ev
from engine.common.errors import Errors
from engine.metadata.store import BadVersionError, NoNodeError
from engine.protocol import PartitionState
from engine.storage import record_batch as rb
from engine.storage.batch_records import INT64_MAX, INT64_MIN, RECORD, decode_records
from engine.storage.errors import KafkaStorageError
from engine.storage.leader_epoch_cache import LeaderEpochCache
from engine.storage.log import Log
from engine.storage.producer_state import ProducerStateError, ProducerStateManager, batch_headers, has_producer_id

if TYPE_CHECKING:
    from engine.node import BrokerContext
    from engine.sim.scheduler import Scheduled

MAX_RECORDS_IN_EVENT = 20


@dataclass(slots=True)
class FollowerState:
    log_end_offset: int = -1        # learnt from the follower's last fetch offset (-1: unknown)
    last_caught_up_ms: int = 0
    last_fetch_leader_leo: int = -1
    last_fetch_ms: int = 0


@dataclass(slots=True)
class PendingProduce:
    required_offset: int            # HW must reach this (last offset + 1)
    base_offset: int
    respond: Callable[[str, int], None]
    timer: Scheduled | None = None


@dataclass(slots=True)
class AppendResult:
    error: str
    base_offset: int = -1
    last_offset: int = -1


class Partition:
    def __init__(self, broker: BrokerContext, topic: str, partition: int, log: Log, epoch_cache: LeaderEpochCache,
                 *, min_insync_replicas: int) -> None:
        self.broker = broker
        self.topic = topic
        self.partition = partition
        self.log = log
        self.epoch_cache = epoch_cache
        self.min_insync_replicas = min_insync_replicas
        self.role = "none"
        self.leader = -1
        self.leader_epoch = -1
        self.partition_epoch = 0    # the state node's version (ZooKeeper's zkVersion)
        self.isr: list[int] = []
        self.replicas: list[int] = []
        self.followers: dict[int, FollowerState] = {}
        self.pending: list[PendingProduce] = []
        self._producer_state: ProducerStateManager | None = None   # read from the log on first use

    @property
    def name(self) -> str:
        return f"{self.topic}-{self.partition}"

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    @property
    def log_end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def producer_state(self) -> ProducerStateManager:
        """Idempotent producers' state, rebuilt from the log's batch headers when first needed
        (after the log was opened or truncated)."""
        if self._producer_state is None:
            self._producer_state = ProducerStateManager.from_log(self.log)
        return self._producer_state

    # -- role changes -----------------------------------------------------------------------
    def become_leader(self, state: PartitionState) -> None:
        now = self.broker.now_ms
        was_leader_same_epoch = self.role == "leader" and self.leader_epoch == state.leader_epoch
        self._apply_state(state, "leader")
        if not was_leader_same_epoch:
            self.epoch_cache.assign(state.leader_epoch, self.log.log_end_offset)
            self.followers = {r: FollowerState(last_caught_up_ms=now if r in state.isr else 0)
                              for r in state.replicas if r != self.broker.id}
        elif set(self.followers) != set(state.replicas) - {self.broker.id}:
            # KRaft: a reassignment adds replicas without a new leader epoch; the leader starts
            # tracking the new ones (ZooKeeper mode's controller bumps the epoch for that).
            self.followers = {r: self.followers.get(r) or FollowerState() for r in state.replicas
                              if r != self.broker.id}
        self.maybe_increment_high_watermark()

    def become_follower(self, state: PartitionState) -> None:
        self._apply_state(state, "follower")
        self.followers = {}
        self._fail_pending(Errors.NOT_LEADER_OR_FOLLOWER)

    def _apply_state(self, state: PartitionState, role: str) -> None:
        self.role = role
        self.leader, self.leader_epoch = state.leader, state.leader_epoch
        self.isr, self.replicas = list(state.isr), list(state.replicas)
        self.partition_epoch = state.partition_epoch
        self.broker.publish(ev.LeaderAndIsrApplied(
            broker=self.broker.id, topic=self.topic, partition=self.partition, role=role,
            leader=state.leader, leader_epoch=state.leader_epoch, isr=list(state.isr)))

    def stop(self) -> None:
        """The broker is going away: nothing waits on this replica any more."""
        self._fail_pending(Errors.NOT_LEADER_OR_FOLLOWER)
        self.role = "none"

    # -- leader: produce --------------------------------------------------------------------
    def append_as_leader(self, records: bytes, acks: int) -> AppendResult:
        if self.role != "leader":
            return AppendResult(Errors.NOT_LEADER_OR_FOLLOWER)
        if acks == -1 and len(self.isr) < self.min_insync_replicas:
            return AppendResult(Errors.NOT_ENOUGH_REPLICAS)  # refused before anything is written
        try:
            headers = batch_headers(records)
        except rb.CorruptRecordError:
            headers = []  # the log's validation refuses these bytes below, with CORRUPT_MESSAGE
        idempotent = any(has_producer_id(h) for h in headers)
        if idempotent:
            refused = self._check_producer_state(headers)
            if refused is not None:
                return refused
        try:
            info = self.log.append_batches(records, leader_epoch=self.leader_epoch)
        except KafkaStorageError as error:
            return AppendResult(error.kafka_name)
        if idempotent:   # the state was built (before the append) by the check above
            self.producer_state.update(headers, info.first_offset)
        self._publish_append("leader", records, info.first_offset, info.last_offset, self.leader_epoch)
        self.maybe_increment_high_watermark()
        return AppendResult(Errors.NONE, info.first_offset, info.last_offset)

    def _check_producer_state(self, headers: list[rb.BatchHeader]) -> AppendResult | None:
        """A duplicate is answered with its original offsets; a bad sequence or epoch is refused."""
        try:
            duplicate = self.producer_state.check_client_append(headers)
        except ProducerStateError as error:
            self.broker.publish(ev.ProduceSequenceRejected(
                broker=self.broker.id, topic=self.topic, partition=self.partition, producer_id=error.producer_id,
                producer_epoch=error.producer_epoch, base_sequence=error.base_sequence,
                expected_sequence=error.expected_sequence, error=error.kafka_name))
            return AppendResult(error.kafka_name)
        if duplicate is None:
            return None
        first = next(h for h in headers if has_producer_id(h))
        self.broker.publish(ev.DuplicateBatchIgnored(
            broker=self.broker.id, topic=self.topic, partition=self.partition, producer_id=first.producer_id,
            producer_epoch=first.producer_epoch, first_sequence=duplicate.first_sequence,
            last_sequence=duplicate.last_sequence, base_offset=duplicate.first_offset,
            last_offset=duplicate.last_offset))
        return AppendResult(Errors.NONE, duplicate.first_offset, duplicate.last_offset)

    def wait_for_acks(self, result: AppendResult, respond: Callable[[str, int], None], timeout_ms: int) -> None:
        """acks=all: answer once HW passes the appended records, or time out."""
        pending = PendingProduce(result.last_offset + 1, result.base_offset, respond)
        if self._try_complete(pending):
            return
        pending.timer = self.broker.schedule(timeout_ms, lambda: self._expire(pending), "produce purgatory timeout")
        self.pending.append(pending)

    def _try_complete(self, pending: PendingProduce) -> bool:
        if self.high_watermark < pending.required_offset:
            return False
        error = Errors.NONE if len(self.isr) >= self.min_insync_replicas else Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        pending.respond(error, pending.base_offset)
        return True

    def _complete_pending(self) -> None:
        still = []
        for pending in self.pending:
            if self._try_complete(pending):
                self.broker.cancel(pending.timer)
            else:
                still.append(pending)
        self.pending = still

    def _expire(self, pending: PendingProduce) -> None:
        if pending in self.pending:
            self.pending.remove(pending)
            pending.respond(Errors.REQUEST_TIMED_OUT, pending.base_offset)

    def _fail_pending(self, error: str) -> None:
        pending, self.pending = self.pending, []
        for p in pending:
            self.broker.cancel(p.timer)
            p.respond(error, p.base_offset)

    # -- leader: followers, ISR, HW ---------------------------------------------------------
    def on_follower_fetch(self, replica: int, fetch_offset: int) -> None:
        """Kafka's updateFollowerFetchState: the fetch offset is the follower's LEO."""
        state = self.followers.get(replica)
        if state is None:
            return
        now = self.broker.now_ms
        leader_leo = self.log.log_end_offset
        if fetch_offset >= leader_leo:
            state.last_caught_up_ms = now
        elif fetch_offset >= state.last_fetch_leader_leo:
            state.last_caught_up_ms = max(state.last_caught_up_ms, state.last_fetch_ms)
        state.log_end_offset = fetch_offset
        state.last_fetch_leader_leo = leader_leo
        state.last_fetch_ms = now
        self._maybe_expand_isr(replica, state)
        self.maybe_increment_high_watermark()

    def _maybe_expand_isr(self, replica: int, state: FollowerState) -> None:
        if replica in self.isr:
            return
        epoch_start = dict(self.epoch_cache.entries).get(self.leader_epoch, 0)
        if state.log_end_offset >= self.high_watermark and state.log_end_offset >= epoch_start:
            new_isr = [r for r in self.replicas if r in self.isr or r == replica]

            def expanded() -> None:
                self.broker.publish(ev.IsrExpanded(topic=self.topic, partition=self.partition,
                                                   leader=self.broker.id, added=[replica], isr=list(new_isr)))
            if self._write_isr(new_isr, expanded, then_advance=True):
                expanded()

    def maybe_shrink_isr(self) -> None:
        """The isr-expiration task: drop followers not caught up within replica.lag.time.max.ms."""
        if self.role != "leader":
            return
        now, lag = self.broker.now_ms, self.broker.config.replica_lag_time_max_ms
        leader_leo = self.log.log_end_offset
        out = [r for r in self.isr if r != self.broker.id
               and self.followers.get(r, FollowerState()).log_end_offset != leader_leo
               and now - self.followers.get(r, FollowerState()).last_caught_up_ms > lag]
        if not out:
            return
        new_isr = [r for r in self.isr if r not in out]

        def shrunk() -> None:
            self.broker.publish(ev.IsrShrunk(
                topic=self.topic, partition=self.partition, leader=self.broker.id, removed=out,
                isr=list(new_isr), reason=f"not caught up for {lag} ms (replica.lag.time.max.ms)"))
            self.maybe_increment_high_watermark()
            self._complete_pending()
        if self._write_isr(new_isr, shrunk):
            shrunk()

    def _write_isr(self, new_isr: list[int], on_applied: Callable[[], None], *, then_advance: bool = False) -> bool:
        """ZooKeeper mode: write the new ISR to its znode, only if nobody changed the state since; True
        when written (the caller then announces it). KRaft mode: ask the controller (AlterPartition) and
        return False; `on_applied` runs once the controller committed the change and this replica took
        it (the ISR is the old one until then, as Kafka's pending ISR state keeps it for this purpose)."""
        kraft = getattr(self.broker, "kraft", None)
        if kraft is not None:
            def done(ok: bool) -> None:
                if ok:
                    on_applied()
                    if then_advance:
                        self.maybe_increment_high_watermark()
            kraft.alter_partition(self, new_isr, done)
            return False
        path = f"/brokers/topics/{self.topic}/partitions/{self.partition}/state"
        store = self.broker.store
        try:
            data, version = store.get(path)
            if version != self.partition_epoch or data["leader_epoch"] != self.leader_epoch:
                return False  # the controller moved on; its LeaderAndIsr will tell us
            data["isr"] = new_isr
            self.partition_epoch = store.set(path, data, expected_version=version)
        except (BadVersionError, NoNodeError):
            return False
        self.isr = list(new_isr)
        return True

    def maybe_increment_high_watermark(self) -> None:
        if self.role != "leader" or len(self.isr) < self.min_insync_replicas:
            return
        now, lag = self.broker.now_ms, self.broker.config.replica_lag_time_max_ms
        offsets = [self.log.log_end_offset]
        for replica, state in self.followers.items():
            if replica in self.isr or (state.log_end_offset >= 0 and now - state.last_caught_up_ms <= lag
                                       and self.broker.is_broker_registered(replica)):
                offsets.append(state.log_end_offset)
        if self._advance_high_watermark(min(offsets)):
            self._complete_pending()

    # -- follower ---------------------------------------------------------------------------
    def append_as_follower(self, records: bytes) -> None:
        headers = batch_headers(records)
        # Build the producer state from the log before this append, if this append needs it.
        state = self.producer_state if any(has_producer_id(h) for h in headers) else self._producer_state
        info = self.log.append_batches(records, assign_offsets=False)
        if state is not None:
            state.update(headers)
        epoch = self.epoch_cache.latest_epoch
        for header in headers:
            if header.partition_leader_epoch > epoch:
                self.epoch_cache.assign(header.partition_leader_epoch, header.base_offset)
                epoch = header.partition_leader_epoch
        self._publish_append("follower", records, info.first_offset, info.last_offset, epoch)

    def update_follower_high_watermark(self, leader_high_watermark: int) -> None:
        self._advance_high_watermark(min(leader_high_watermark, self.log.log_end_offset))

    def _advance_high_watermark(self, new_hw: int) -> bool:
        """The HW only moves forward (a follower's may lag, never regress)."""
        old = self.high_watermark
        if new_hw <= old:
            return False
        self.log.update_high_watermark(new_hw)
        self.broker.publish(ev.HighWatermarkAdvanced(broker=self.broker.id, topic=self.topic,
                                                     partition=self.partition, old=old, new=new_hw,
                                                     role=self.role))
        return True

    def truncate_to(self, offset: int, reason: str) -> None:
        result = self.log.truncate_to(offset)
        self._producer_state = None  # rebuilt from what is left of the log when next needed
        epochs_before = self.epoch_cache.entries
        # Even when the log has nothing past `offset`, UnifiedLog.truncateTo cuts the epoch cache at the
        # log end: a replica that led an epoch but appended nothing in it keeps a conflicting entry.
        self.epoch_cache.truncate_from_end(self.log.log_end_offset)
        if result.records_removed or result.bytes_removed or self.epoch_cache.entries != epochs_before:
            self.broker.publish(ev.LogTruncated(
                broker=self.broker.id, topic=self.topic, partition=self.partition,
                from_offset=result.from_offset, to_offset=result.to_offset,
                records_removed=result.records_removed,
                removed=[{"offset": o, "key": ev.text(k), "value": ev.text(v)} for o, k, v in result.removed],
                reason=reason))

    def truncate_fully_and_start_at(self, offset: int, reason: str) -> None:
        before = self.log.log_end_offset
        removed = self.log.records_from(self.log.log_start_offset) if before > self.log.log_start_offset else []
        self.log.truncate_fully_and_start_at(offset)
        self._producer_state = None
        self.broker.durable_offsets[(self.topic, self.partition)] = offset
        self.epoch_cache.clear()
        self.broker.publish(ev.LogTruncated(
            broker=self.broker.id, topic=self.topic, partition=self.partition, from_offset=before,
            to_offset=offset, records_removed=len(removed),
            removed=[{"offset": r.offset, "key": ev.text(r.key), "value": ev.text(r.value)} for r in removed],
            reason=reason))

    # -- reads ------------------------------------------------------------------------------
    def committed_records(self, offset: int, max_records: int) -> list[rb.Record]:
        """What a consumer may see: records below the high watermark."""
        out: list[rb.Record] = []
        hw = self.high_watermark
        while offset < hw and len(out) < max_records:
            chunk = self.log.read(offset, 1 << 20, max_offset=hw)
            if not chunk:
                break
            out.extend(chunk)
            offset = chunk[-1].offset + 1
        return out[:max_records]

    def _publish_append(self, role: str, records: bytes, first: int, last: int, epoch: int) -> None:
        # Small appends (what a learner sends from the lab) carry their records for the browser to
        # draw; large ones (benchmarks, streams) carry only offsets — decoding them would cost more
        # than the append itself.
        count = last - first + 1
        shown = []
        if count <= MAX_RECORDS_IN_EVENT:
            decoded = decode_records(records, INT64_MIN, INT64_MAX, RECORD, verify_crc=False, keep_control=True)
            # A leader's input still has the producer's offsets: the assigned ones count from `first`.
            shown = [{"offset": offset, "key": ev.text(r.key), "value": ev.text(r.value)}
                     for offset, r in enumerate(decoded, first)]
        self.broker.publish(ev.RecordsAppended(
            broker=self.broker.id, topic=self.topic, partition=self.partition, role=role,
            base_offset=first, last_offset=last, leader_epoch=epoch,
            log_end_offset=self.log.log_end_offset, records_count=count, records=shown))
