"""A replica's leader epoch cache: which leader epoch started at which offset (KIP-101).

Entries `(epoch, start_offset)` with both strictly increasing. A leader adds `(new epoch, its
LEO)` the moment it becomes leader; a follower adds an entry when it appends a batch stamped
with a newer epoch than it has seen. Persisted in the partition's `leader-epoch-checkpoint`
on every change (Kafka writes it synchronously too).

`end_offset_for(epoch)` answers OffsetsForLeaderEpoch the KIP-279 way: the largest epoch <= the
requested one that this replica knows, and where that epoch ends (the start of the next higher
epoch, or the log end for the latest epoch). As in Kafka's LeaderEpochFileCache.endOffsetFor, an
epoch older than every cached one gets (that epoch, the first cached start offset), and an
undefined epoch, an empty cache or an epoch newer than the latest gets (-1, -1).
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
        self.entries: list[tuple[int, int]] = checkpoints.read_epochs(self.path)

    @property
    def latest_epoch(self) -> int:
        return self.entries[-1][0] if self.entries else UNDEFINED

    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that `epoch` starts at `start_offset`; False if it adds nothing new."""
        if epoch < 0 or (self.entries and epoch <= self.entries[-1][0]):
            return False
        # An older entry starting at or after this offset can no longer be right.
        self.entries = [(e, o) for e, o in self.entries if o < start_offset]
        self.entries.append((epoch, start_offset))
        self._write()
        return True

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) for OffsetsForLeaderEpoch; (-1, -1) if the epoch is undefined or unknown."""
        if requested_epoch < 0 or not self.entries or requested_epoch > self.latest_epoch:
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
        """The log was cut at `end_offset`: drop epochs that start at or after it."""
        kept = [(e, o) for e, o in self.entries if o < end_offset]
        if kept != self.entries:
            self.entries = kept
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
