"""A follower broker's fetch loop towards one leader broker (Kafka's ReplicaFetcherThread).

Followers *pull*: each fetcher keeps one Fetch request in flight for all the partitions this
broker follows on that leader, and sends the next as soon as the answer arrives. The leader
holds a request with nothing new for up to `replica.fetch.wait.max.ms` (long polling).

Before fetching, a partition that just became a follower finds where its log may have
diverged from the leader's and truncates there, by one of the two mechanisms the lab teaches:
- "high-watermark" (Kafka before 0.11): truncate to the local HW — which may cut records the
  leader already counted as committed (KIP-101's data loss), or keep records the new leader
  never had (KIP-101's divergence);
- "leader-epoch" (KIP-101/279): ask the leader with OffsetsForLeaderEpoch where the follower's
  latest epoch ends, and truncate to min(that end offset, own end of that epoch, own LEO).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.common.errors import Errors
from engine.protocol import (
    EpochQuery,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
)
from engine.storage.leader_epoch_cache import UNDEFINED

if TYPE_CHECKING:
    from engine.node import BrokerContext
    from engine.sim.scheduler import Scheduled

HIGH_WATERMARK = "high-watermark"
LEADER_EPOCH = "leader-epoch"
TRUNCATION_MODES = (HIGH_WATERMARK, LEADER_EPOCH)


@dataclass(slots=True)
class FetchState:
    leader_epoch: int
    truncating: bool
    delayed_until_ms: int = 0       # back-off after an error


class ReplicaFetcher:
    def __init__(self, broker: BrokerContext, leader: int) -> None:
        self.broker = broker
        self.leader = leader
        self.states: dict[tuple[str, int], FetchState] = {}
        self._in_flight: int | None = None
        self._timeout: Scheduled | None = None
        self._next_request = 0
        self._wakeup: Scheduled | None = None

    # -- membership -------------------------------------------------------------------------
    def add_partition(self, key: tuple[str, int], leader_epoch: int) -> None:
        partition = self.broker.partitions[key]
        if self.broker.cluster_config.truncation == HIGH_WATERMARK:
            partition.truncate_to(partition.high_watermark, HIGH_WATERMARK)
            self.states[key] = FetchState(leader_epoch, truncating=False)
        else:
            self.states[key] = FetchState(leader_epoch, truncating=True)
        self.maybe_send()

    def remove_partition(self, key: tuple[str, int]) -> None:
        self.states.pop(key, None)

    def abandon_in_flight(self) -> None:
        """A paused follower processes nothing: whatever answer is on its way will be ignored."""
        self._in_flight = None
        self.broker.cancel(self._timeout)

    def stop(self) -> None:
        self.states.clear()
        self.broker.cancel(self._timeout)
        self.broker.cancel(self._wakeup)
        self._in_flight = None

    # -- the loop ---------------------------------------------------------------------------
    def maybe_send(self) -> None:
        if self._in_flight is not None or not self.broker.alive or self.broker.fetchers_paused:
            return
        now = self.broker.now_ms
        ready = {k: s for k, s in self.states.items() if s.delayed_until_ms <= now}
        if not ready:
            self._wake_later()
            return
        truncating = {k: s for k, s in ready.items() if s.truncating}
        if truncating:
            self._send_epoch_queries(truncating)
        else:
            self._send_fetch(ready)

    def _wake_later(self) -> None:
        delayed = [s.delayed_until_ms for s in self.states.values() if s.delayed_until_ms > self.broker.now_ms]
        if delayed and self._wakeup is None:
            def wake() -> None:
                self._wakeup = None
                self.maybe_send()
            self._wakeup = self.broker.schedule(min(delayed) - self.broker.now_ms, wake,
                                                "fetcher back-off", foreground=False)

    def _send_fetch(self, ready: dict[tuple[str, int], FetchState]) -> None:
        config = self.broker.config
        parts = []
        for (topic, p), state in ready.items():
            partition = self.broker.partitions[(topic, p)]
            parts.append(FetchPartition(topic, p, partition.log_end_offset, state.leader_epoch,
                                        partition.log.log_start_offset, config.replica_fetch_max_bytes))
        request = FetchRequest(self.broker.id, config.replica_fetch_wait_max_ms, config.replica_fetch_min_bytes,
                               config.replica_fetch_response_max_bytes, parts)
        summary = {"partitions": [{"topic": f.topic, "partition": f.partition, "fetch_offset": f.fetch_offset}
                                  for f in parts]}
        self._send(request, summary, foreground=False)

    def _send_epoch_queries(self, truncating: dict[tuple[str, int], FetchState]) -> None:
        queries = []
        for (topic, p), state in truncating.items():
            cache = self.broker.partitions[(topic, p)].epoch_cache
            queries.append(EpochQuery(topic, p, state.leader_epoch, cache.latest_epoch))
        summary = {"partitions": [{"topic": q.topic, "partition": q.partition, "leader_epoch": q.leader_epoch}
                                  for q in queries]}
        self._send(OffsetsForLeaderEpochRequest(self.broker.id, queries), summary, foreground=True)

    def _send(self, request: object, summary: dict, *, foreground: bool) -> None:
        self._next_request += 1
        request_id = self._in_flight = self._next_request
        self.broker.send_to_broker(self.leader, request, summary, foreground=foreground,
                                   on_response=lambda response: self._on_response(request_id, response))
        timeout = self.broker.config.replica_socket_timeout_ms
        self._timeout = self.broker.schedule(timeout, lambda: self._on_timeout(request_id),
                                             "replica fetch timeout", foreground=False)

    def _on_timeout(self, request_id: int) -> None:
        if self._in_flight == request_id:
            self._in_flight = None
            self.maybe_send()

    def _on_response(self, request_id: int, response: object) -> None:
        if self._in_flight != request_id or not self.broker.alive:
            return  # an answer to a request given up on, or to a previous incarnation
        self._in_flight = None
        self.broker.cancel(self._timeout)
        if isinstance(response, FetchResponse):
            self._handle_fetch(response)
        elif isinstance(response, OffsetsForLeaderEpochResponse):
            self._handle_epochs(response)
        self.maybe_send()

    # -- answers ----------------------------------------------------------------------------
    def _handle_fetch(self, response: FetchResponse) -> None:
        for data in response.partitions:
            key = (data.topic, data.partition)
            state = self.states.get(key)
            if state is None or state.truncating:
                continue
            partition = self.broker.partitions[key]
            if data.error == Errors.NONE:
                if data.records:
                    partition.append_as_follower(data.records)
                high_watermark = partition.high_watermark
                partition.update_follower_high_watermark(data.high_watermark)
                if partition.high_watermark != high_watermark:   # consumers reading here may see more (KIP-392)
                    self.broker.complete_delayed_follower_reads(data.topic, data.partition)
            elif data.error == Errors.OFFSET_OUT_OF_RANGE:
                self._handle_out_of_range(key, data.log_start_offset, data.log_end_offset)
            else:
                state.delayed_until_ms = self.broker.now_ms + self.broker.config.replica_fetch_backoff_ms

    def _handle_out_of_range(self, key: tuple[str, int], leader_start: int, leader_end: int) -> None:
        partition = self.broker.partitions[key]
        if 0 <= leader_end < partition.log_end_offset:
            partition.truncate_to(leader_end, "offset out of range")
        else:
            partition.truncate_fully_and_start_at(max(leader_start, 0), "offset out of range")

    def _handle_epochs(self, response: OffsetsForLeaderEpochResponse) -> None:
        for answer in response.partitions:
            key = (answer.topic, answer.partition)
            state = self.states.get(key)
            if state is None or not state.truncating:
                continue
            if answer.error != Errors.NONE:
                state.delayed_until_ms = self.broker.now_ms + self.broker.config.replica_fetch_backoff_ms
                continue
            partition = self.broker.partitions[key]
            offset, settled = self._truncation_offset(partition, answer.leader_epoch, answer.end_offset)
            partition.truncate_to(offset, LEADER_EPOCH)
            # Not settled: the follower cut back to an epoch older than the leader's answer and
            # asks again about that one (its cache lost the newer entries with the cut).
            state.truncating = not settled

    @staticmethod
    def _truncation_offset(partition, leader_epoch: int, leader_end_offset: int) -> tuple[int, bool]:
        """KIP-279: where the follower's log stops agreeing with the leader's, and whether that
        is final. If the follower knows the epoch the leader answered with, truncate to the
        smallest of the leader's end offset, its own end of that epoch and its LEO. If not, truncate
        to its own end of the largest smaller epoch and ask again."""
        leo = partition.log_end_offset
        if leader_epoch == UNDEFINED or leader_end_offset == UNDEFINED:
            return min(partition.high_watermark, leo), True  # the leader knows nothing: fall back to HW
        own_epoch, own_end = partition.epoch_cache.end_offset_for(leader_epoch, leo)
        if own_epoch == UNDEFINED:
            return min(leader_end_offset, leo), True
        if own_epoch == leader_epoch:
            return min(leader_end_offset, own_end, leo), True
        return min(own_end, leo), False
