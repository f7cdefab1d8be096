"""The metadata log a Raft replica keeps: `__cluster_metadata-0`, real segments and a leader epoch cache.

Kafka's KafkaMetadataLog (core/.../raft/KafkaMetadataLog.scala) over a UnifiedLog, with the
ReplicatedLog defaults (raft/.../ReplicatedLog.java). Here it is an engine.storage.log.Log and an
engine.storage.leader_epoch_cache.LeaderEpochCache in the same directory, so the metadata log
looks on disk like any partition: `00000000000000000000.log`, `.index`, `.timeindex`,
`leader-epoch-checkpoint`.

What it keeps:
- every batch carries the Raft epoch that wrote it as its partitionLeaderEpoch; a leader assigns
  (epoch, log end) in the cache when its epoch starts (initializeLeaderEpoch), a follower assigns
  each newer epoch its batches carry (UnifiedLog's appendAsFollower);
- `last_fetched_epoch`: the cache's latest epoch, 0 for an empty log (KafkaMetadataLog.lastFetchedEpoch);
- `validate_offset_and_epoch` answers a Fetch: valid, or the diverging epoch and where it ends in
  this log (ReplicatedLog.validateOffsetAndEpoch, KIP-595);
- `truncate_to_end_offset` is a follower's answer to a diverging epoch (ReplicatedLog.truncateToEndOffset);
- `flush` after each append (a voter must have its entries on disk before it reports them: the
  leader counts what it flushed, a voter fetches again only after flushing).

No snapshots, no deletion: the log keeps everything (retention.ms -1), so a fetch never needs a
snapshot and the log start is always 0.
"""
from __future__ import annotations

from collections.abc import Callable

from engine.raft.config import QuorumConfig
from engine.raft.listener import CommittedBatch
from engine.raft.messages import DivergingEpoch
from engine.storage import record_batch as rb
from engine.storage.leader_epoch_cache import UNDEFINED, LeaderEpochCache
from engine.storage.log import AppendInfo, Log

MAX_BATCH_SIZE_BYTES = 8 * 1024 * 1024    # KafkaRaftClient.MAX_BATCH_SIZE_BYTES
READ_CHUNK_BYTES = 1024 * 1024


class MetadataLog:
    def __init__(self, log_dir: str, config: QuorumConfig, *, clock_ms: Callable[[], int],
                 fsync: bool = False) -> None:
        self.log = Log(log_dir, {"segment.bytes": config.metadata_log_segment_bytes,
                                 "segment.ms": config.metadata_log_segment_ms,
                                 "retention.ms": -1, "retention.bytes": -1,
                                 "max.message.bytes": MAX_BATCH_SIZE_BYTES},
                       high_watermark=0, clock_ms=clock_ms, fsync=fsync)
        self.epochs = LeaderEpochCache(log_dir, fsync=fsync)
        # LogLoader: epochs that start at or past the recovered log end describe nothing on disk.
        self.epochs.truncate_from_end(self.log.log_end_offset)
        # KafkaMetadataLog opens its log with recovery point 0 (everything is validated). What
        # recovery kept is on disk now (a voter flushed it before acknowledging it), so it is
        # marked flushed at once: a power loss later in this incarnation loses only newer bytes.
        self.log.flush()

    # -- state ------------------------------------------------------------------------------
    @property
    def end_offset(self) -> int:
        return self.log.log_end_offset

    @property
    def last_fetched_epoch(self) -> int:
        latest = self.epochs.latest_epoch
        return 0 if latest == UNDEFINED else latest

    @property
    def high_watermark(self) -> int:
        return self.log.high_watermark

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """(end offset, epoch) of the largest epoch <= `epoch` this log has (KafkaMetadataLog.endOffsetForEpoch);
        the log end and the last fetched epoch when the cache has no answer."""
        found_epoch, end = self.epochs.end_offset_for(epoch, self.end_offset)
        if found_epoch == UNDEFINED:
            return self.end_offset, self.last_fetched_epoch
        return end, found_epoch

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> DivergingEpoch | None:
        """None when a fetch at (offset, last fetched epoch) continues this log; otherwise where the
        fetcher's log diverges (ReplicatedLog.validateOffsetAndEpoch, without snapshots)."""
        if offset == 0:
            return None        # an empty log is a prefix of every log (log start is always 0 here)
        end, found_epoch = self.end_offset_for_epoch(epoch)
        if found_epoch != epoch or end < offset:
            return DivergingEpoch(found_epoch, end)
        return None

    # -- writes -----------------------------------------------------------------------------
    def initialize_leader_epoch(self, epoch: int) -> None:
        """A new leader's epoch starts at its log end (UnifiedLog.maybeAssignEpochStartOffset)."""
        self.epochs.assign(epoch, self.end_offset)

    def append_as_leader(self, batch: bytes, epoch: int) -> AppendInfo:
        info = self.log.append_batches(batch, leader_epoch=epoch)
        self.epochs.assign(epoch, info.first_offset)
        return info

    def append_as_follower(self, records: bytes) -> AppendInfo:
        """The leader's batches, at the leader's offsets; each newer epoch they carry enters the cache."""
        info = self.log.append_batches(records, assign_offsets=False)
        for _, header in rb.iter_batches(records):
            if header.partition_leader_epoch > self.epochs.latest_epoch:
                self.epochs.assign(header.partition_leader_epoch, header.base_offset)
        return info

    def truncate_to_end_offset(self, diverging: DivergingEpoch) -> int:
        """Truncate where the leader says this log diverges; the truncation offset
        (ReplicatedLog.truncateToEndOffset: the smaller of the two logs' ends of that epoch)."""
        if diverging.epoch == 0:
            offset = min(diverging.end_offset, self.end_offset)
        else:
            local_end, local_epoch = self.end_offset_for_epoch(diverging.epoch)
            offset = min(local_end, diverging.end_offset) if local_epoch == diverging.epoch else local_end
        self.truncate_to(offset)
        return offset

    def truncate_to(self, offset: int) -> None:
        self.log.truncate_to(offset)
        self.epochs.truncate_from_end(offset)

    def flush(self) -> None:
        self.log.flush()

    def update_high_watermark(self, offset: int) -> None:
        self.log.update_high_watermark(offset)

    # -- reads ------------------------------------------------------------------------------
    def read(self, offset: int, max_bytes: int) -> bytes:
        """Whole batches from `offset` (a Fetch answer's records; empty at the log end)."""
        return self.log.read_batches(offset, max_bytes).records

    def committed_batches(self, offset: int, high_watermark: int) -> list[CommittedBatch]:
        """The batches from `offset` (a batch boundary) whose last offset is below `high_watermark`."""
        out: list[CommittedBatch] = []
        while offset < high_watermark:
            data = self.log.read_batches(offset, READ_CHUNK_BYTES, max_offset=high_watermark).records
            if not data:
                break
            position = 0
            while position < len(data):
                header, records = rb.decode_batch(data, position, verify_crc=False)
                position += header.size_in_bytes
                out.append(CommittedBatch(header.base_offset, header.last_offset, header.partition_leader_epoch,
                                          tuple(r.value or b"" for r in records), header.is_control,
                                          header.max_timestamp))
                offset = header.next_offset
        return out

    def batches(self) -> list[CommittedBatch]:
        """Every batch in the log, committed or not (for tests and views)."""
        return self.committed_batches(0, self.end_offset)

    def close(self) -> None:
        self.log.close()

    def close_after_crash(self, *, lose_unflushed: bool) -> None:
        self.log.close_after_crash(lose_unflushed=lose_unflushed)
