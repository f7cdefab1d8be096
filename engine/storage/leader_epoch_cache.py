"""A replica's leader epoch cache: which leader epoch started at which offset (KIP-101).

Entries `(epoch, start_offset)` with both strictly increasing. A leader adds `(new epoch, its
LEO)` the moment it becomes leader; a follower adds an entry when it appends a batch stamped
with a newer epoch than it has seen. Persisted in the partition's `leader-epoch-checkpoint`
on every change.

The rules are Kafka's LeaderEpochFileCache (storage/.../epoch/LeaderEpochFileCache.java), checked
case by case in tests/engine/kafka_parity/test_leader_epoch_file_cache.py:
- `assign`: the latest epoch again at the same or a later offset changes nothing (an epoch's
  start never moves up); any other entry — a newer epoch, the latest epoch at an earlier offset,
  an older epoch — first removes from the end every entry whose epoch or start offset is not
  below its own (maybeTruncateNonMonotonicEntries), then is kept. A negative epoch or offset is
  refused (IllegalArgumentException there, ValueError here).
- `end_offset_for` answers OffsetsForLeaderEpoch the KIP-279 way: the largest epoch <= the
  requested one that this replica knows, and where that epoch ends (the start of the next higher
  epoch, or the log end for the latest epoch). An epoch older than every cached one gets (that
  epoch, the first cached start offset); the undefined epoch, an empty cache or an epoch newer
  than the latest gets (-1, -1).
- `truncate_from_end(end)` drops the entries starting at or after `end`, and only acts for
  `end >= 0`; `truncate_from_start(start)` drops the entries starting at or before `start` and
  gives the last of them `start` as its new start offset.
- Reopening reads the checkpoint back through `assign`, as Kafka's constructor does, so a file
  whose entries are out of order is read as the monotonic cache Kafka would make of it.

Simplification (deliberate): every change is written and fsynced at once. Kafka flushes the two
truncations in the background (truncateFromEndAsyncFlush) and relies on the truncation at log
load to correct a stale file; here the file never lags. The tiered-storage helpers
(previousEpoch, nextEpoch, epochEntriesInRange) are left out: nothing in the engine asks them.
"""
from __future__ import annotations

import os

from engine.storage import checkpoints

FILE_NAME = "leader-epoch-checkpoint"
UNDEFINED = -1


class LeaderEpochCache:
    def __init__(self, partition_dir: str, *, fsync: bool = True) -> None:
        self.path = os.path.join(partition_dir, FILE_NAME)
        self._fsync = fsync
        self.entries: list[tuple[int, int]] = []
        # Kafka's constructor: checkpoint.read().forEach(this::assign), without writing back.
        for epoch, start_offset in checkpoints.read_epochs(self.path):
            self._assign(epoch, start_offset)

    @property
    def latest_epoch(self) -> int:
        return self.entries[-1][0] if self.entries else UNDEFINED

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that `epoch` starts at `start_offset`; False if that changes nothing."""
        if not self._assign(epoch, start_offset):
            return False
        self._write()
        return True

    def _assign(self, epoch: int, start_offset: int) -> bool:
        if epoch < 0 or start_offset < 0:
            raise ValueError(f"Received invalid partition leader epoch entry ({epoch}, {start_offset})")
        if self.entries:   # isUpdateNeeded: the latest epoch's start only ever moves down
            latest_epoch, latest_start = self.entries[-1]
            if epoch == latest_epoch and start_offset >= latest_start:
                return False
        kept = list(self.entries)  # a new list: readers may hold the old one
        # maybeTruncateNonMonotonicEntries: from the end, whatever the new entry contradicts.
        while kept and (kept[-1][0] >= epoch or kept[-1][1] >= start_offset):
            kept.pop()
        kept.append((epoch, start_offset))
        self.entries = kept
        return True

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) for OffsetsForLeaderEpoch; (-1, -1) if the epoch is undefined or unknown."""
        if requested_epoch == UNDEFINED or not self.entries or requested_epoch > self.latest_epoch:
            return UNDEFINED, UNDEFINED
        if requested_epoch == self.latest_epoch:
            return requested_epoch, log_end_offset
        floor_epoch = requested_epoch  # older than every entry: the log before the first is gone
        for epoch, start in self.entries:
            if epoch > requested_epoch:
                return floor_epoch, start
            floor_epoch = epoch
        raise AssertionError("unreachable: requested epoch below the latest was not found")

    def epoch_for_offset(self, offset: int) -> int:
        epoch = UNDEFINED
        for e, start in self.entries:
            if start <= offset:
                epoch = e
        return epoch

    def truncate_from_end(self, end_offset: int) -> None:
        """The log was cut at `end_offset`: drop epochs that start at or after it. An undefined
        (negative) end offset changes nothing, as in Kafka's truncateFromEnd."""
        if end_offset < 0 or not self.entries or self.entries[-1][1] < end_offset:
            return
        self.entries = [(e, o) for e, o in self.entries if o < end_offset]
        self._write()

    def truncate_from_start(self, start_offset: int) -> None:
        """The log start moved to `start_offset`: the epoch holding it now starts there."""
        if not self.entries or self.entries[0][1] >= start_offset:
            return
        keep = [(e, o) for e, o in self.entries if o > start_offset]
        holder = max((e for e, o in self.entries if o <= start_offset), default=None)
        if holder is not None:
            keep.insert(0, (holder, start_offset))
        self.entries = keep
        self._write()

    def clear(self) -> None:
        self.entries = []
        self._write()

    def _write(self) -> None:
        checkpoints.write_epochs(self.path, self.entries, fsync=self._fsync)
