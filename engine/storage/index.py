"""A segment's sparse indexes: the offset index (`.index`) and the time index (`.timeindex`).

Offset index entry, 8 bytes big-endian:
    relativeOffset  int32   offset - segment base offset
    position        int32   byte position in the .log file where the indexed batch starts
Time index entry, 12 bytes big-endian:
    timestamp       int64   largest record timestamp seen so far in the segment
    relativeOffset  int32   offset (relative) of the batch holding that timestamp

Both are sparse: the segment adds an entry only after more than `index.interval.bytes` were
appended since the last one, so a lookup lands on the nearest entry at or below the target and
the reader scans forward from there. Offsets and timestamps in a file only ever increase.

Kafka preallocates index files to `segment.index.bytes` and trims them on roll; here a file holds
exactly its entries (what `ls -l` shows is what is indexed), while the preallocated size still
bounds the entry count so "index full" rolls a segment as in Kafka. Entries are kept in memory
as arrays, so a lookup never re-reads the file; writes are buffered (Kafka writes its index
through mmap, i.e. to memory) and reach the file on sync, flush, roll, close, or a process crash.

Capacity, as Kafka's AbstractIndex/OffsetIndex/TimeIndex keep it: `max_entries` is
`segment.index.bytes // entry size`; the offset index is full at `max_entries` entries, the time
index one entry earlier (TimeIndex.isFull reserves the last slot for the entry a segment adds
when it is rolled or recovered, `maybe_append(..., skip_full_check=True)`). An append to a full
index, or one whose offset does not increase, is refused (Kafka's IllegalArgumentException and
InvalidOffsetException); the segment rolls before that can happen.

Where this differs from Kafka, deliberately: an offset index entry must also move the position
forward (Kafka checks the offset only; every entry a segment writes does both), and a time index
lookup with no entry at or below the target returns None where Kafka returns
(NO_TIMESTAMP, base offset) — both mean "scan from the start of the segment".
"""
from __future__ import annotations

import os
import struct
from array import array
from dataclasses import dataclass

from engine.storage import cow

OFFSET_ENTRY = struct.Struct(">ii")  # relativeOffset, position
TIME_ENTRY = struct.Struct(">qi")    # timestamp, relativeOffset
OFFSET_ENTRY_SIZE = OFFSET_ENTRY.size
TIME_ENTRY_SIZE = TIME_ENTRY.size
NO_TIMESTAMP = -1  # RecordBatch.NO_TIMESTAMP: what an empty time index's last entry holds


class CorruptIndexError(Exception):
    """An index file fails its sanity check; the segment rebuilds it from the log."""


class IndexFullError(ValueError):
    """An append to a full index (Kafka: IllegalArgumentException "Attempt to append to a full index")."""


class InvalidOffsetError(ValueError):
    """An index entry that does not follow the last one (Kafka's InvalidOffsetException)."""


@dataclass(frozen=True, slots=True)
class IndexLookup:
    """Where a binary search of the offset index landed (slot -1: no entry at or below)."""
    slot: int
    offset: int
    position: int
    probes: tuple[int, ...]  # slots visited by the binary search, in order


class _IndexFile:
    """File handling both indexes share: a buffered append-only writer, sync, fsync, close."""
    path: str
    _file = None

    def _writer(self):
        # Appending to a file a checkpoint shares is safe: the checkpoint recorded the file's
        # length when it linked it and a restore copies only that prefix (engine.checkpoint).
        # Rewrites and truncations copy a shared file first (engine.storage.cow).
        if self._file is None:
            self._file = open(self.path, "ab")
        return self._file

    def __getstate__(self) -> dict:
        # An open file is this process's: a restored index (engine.checkpoint) reopens by path.
        # Its buffered entries go to the file first, so that the file holds every entry.
        self.sync()
        state = self.__dict__.copy()
        state["_file"] = None
        return state

    def sync(self) -> None:
        """Hand buffered entries to the OS (like Kafka's mmap'd index pages: written, not flushed)."""
        if self._file is not None:
            self._file.flush()

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()
            os.fsync(self._file.fileno())

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None

    def close(self) -> None:
        self._close_file()


class OffsetIndex(_IndexFile):
    def __init__(self, path: str, base_offset: int, max_index_bytes: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max_index_bytes // OFFSET_ENTRY_SIZE
        self._relative = array("i")
        self._positions = array("i")
        self._file = None

    # -- loading ----------------------------------------------------------------------------
    def load(self) -> None:
        """Read the file; raise CorruptIndexError if it cannot be a valid index."""
        with open(self.path, "rb") as f:
            data = f.read()
        if len(data) % OFFSET_ENTRY_SIZE:
            raise CorruptIndexError(f"{self.path}: size {len(data)} is not a multiple of {OFFSET_ENTRY_SIZE}")
        relative, positions = array("i"), array("i")
        last_rel, last_pos = -1, -1
        for rel, pos in OFFSET_ENTRY.iter_unpack(data):
            if rel <= last_rel or pos <= last_pos or rel < 0:
                raise CorruptIndexError(f"{self.path}: entries do not increase at ({rel}, {pos})")
            relative.append(rel)
            positions.append(pos)
            last_rel, last_pos = rel, pos
        if len(relative) > self.max_entries:
            raise CorruptIndexError(f"{self.path}: {len(relative)} entries exceed the maximum {self.max_entries}")
        self._relative, self._positions = relative, positions

    def reset(self) -> None:
        """Empty the index (before a rebuild)."""
        self._relative, self._positions = array("i"), array("i")
        self._close_file()
        cow.create_empty(self.path)

    # -- writing ----------------------------------------------------------------------------
    def append(self, offset: int, position: int) -> None:
        """Add (offset, position); refused on a full index or an offset not above the last (OffsetIndex.append)."""
        if self.is_full:
            raise IndexFullError(f"Attempt to append to a full index (size = {self.entries}).")
        rel = offset - self.base_offset
        relative, positions = self._relative, self._positions
        if relative and (rel <= relative[-1] or position <= positions[-1]):
            raise InvalidOffsetError(f"Attempt to append an offset {offset} to position {self.entries} no larger "
                                     f"than the last offset appended ({self.last_offset}) to {self.path}")
        relative.append(rel)
        positions.append(position)
        (self._file or self._writer()).write(OFFSET_ENTRY.pack(rel, position))

    def truncate_to(self, offset: int) -> None:
        """Drop every entry for an offset >= `offset`."""
        keep = self._first_slot_at_or_after(offset - self.base_offset)
        self._rewrite(keep)

    def truncate_to_position(self, position: int) -> None:
        """Drop every entry pointing at or past a byte position (the log was cut there)."""
        keep = 0
        while keep < len(self._positions) and self._positions[keep] < position:
            keep += 1
        self._rewrite(keep)

    def _rewrite(self, keep: int) -> None:
        if keep == len(self._relative):
            return
        del self._relative[keep:]
        del self._positions[keep:]
        self._close_file()
        cow.make_private(self.path)
        with open(self.path, "r+b") as f:
            f.truncate(keep * OFFSET_ENTRY_SIZE)

    # -- reading ----------------------------------------------------------------------------
    @property
    def entries(self) -> int:
        return len(self._relative)

    @property
    def is_full(self) -> bool:
        return len(self._relative) >= self.max_entries

    @property
    def last_offset(self) -> int:
        return self.base_offset + self._relative[-1] if self._relative else self.base_offset

    def entry(self, slot: int) -> tuple[int, int]:
        return self.base_offset + self._relative[slot], self._positions[slot]

    def all_entries(self) -> list[tuple[int, int]]:
        return [(self.base_offset + r, p) for r, p in zip(self._relative, self._positions)]

    def lookup(self, offset: int, *, trace: bool = False) -> IndexLookup:
        """Greatest entry with offset <= target, by binary search (position 0 if none)."""
        target = offset - self.base_offset
        rel = self._relative
        lo, hi, found = 0, len(rel) - 1, -1
        probes: list[int] = []
        while lo <= hi:
            mid = (lo + hi) >> 1
            if trace:
                probes.append(mid)
            if rel[mid] <= target:
                found, lo = mid, mid + 1
            else:
                hi = mid - 1
        if found < 0:
            return IndexLookup(-1, self.base_offset, 0, tuple(probes))
        return IndexLookup(found, self.base_offset + rel[found], self._positions[found], tuple(probes))

    def _first_slot_at_or_after(self, rel: int) -> int:
        lo, hi = 0, len(self._relative)
        while lo < hi:
            mid = (lo + hi) >> 1
            if self._relative[mid] < rel:
                lo = mid + 1
            else:
                hi = mid
        return lo

    def size_in_bytes(self) -> int:
        return len(self._relative) * OFFSET_ENTRY_SIZE


class TimeIndex(_IndexFile):
    def __init__(self, path: str, base_offset: int, max_index_bytes: int) -> None:
        self.path = path
        self.base_offset = base_offset
        self.max_entries = max_index_bytes // TIME_ENTRY_SIZE
        self._timestamps = array("q")
        self._relative = array("i")
        self._file = None

    def load(self) -> None:
        with open(self.path, "rb") as f:
            data = f.read()
        if len(data) % TIME_ENTRY_SIZE:
            raise CorruptIndexError(f"{self.path}: size {len(data)} is not a multiple of {TIME_ENTRY_SIZE}")
        timestamps, relative = array("q"), array("i")
        for ts, rel in TIME_ENTRY.iter_unpack(data):
            if rel < 0 or (timestamps and (ts <= timestamps[-1] or rel < relative[-1])):
                raise CorruptIndexError(f"{self.path}: entries do not increase at ({ts}, {rel})")
            timestamps.append(ts)
            relative.append(rel)
        if len(timestamps) > self.max_entries:
            raise CorruptIndexError(f"{self.path}: {len(timestamps)} entries exceed the maximum {self.max_entries}")
        self._timestamps, self._relative = timestamps, relative

    def reset(self) -> None:
        self._timestamps, self._relative = array("q"), array("i")
        self._close_file()
        cow.create_empty(self.path)

    def maybe_append(self, timestamp: int, offset: int, *, skip_full_check: bool = False) -> None:
        """Add (timestamp, offset) only if the timestamp is larger than the last entry's (TimeIndex.maybeAppend).

        Refused: on a full index unless `skip_full_check` (the roll's and recovery's last entry uses
        the reserved slot), and an offset or a timestamp below the last entry's. The same entry
        again (a segment closed twice) is a no-op."""
        if not skip_full_check and self.is_full:
            raise IndexFullError(f"Attempt to append to a full time index (size = {self.entries}).")
        rel = offset - self.base_offset
        relative, timestamps = self._relative, self._timestamps
        if relative and rel < relative[-1]:
            raise InvalidOffsetError(
                f"Attempt to append an offset ({offset}) to slot {self.entries} no larger than the last offset "
                f"appended ({self.base_offset + relative[-1]}) to {self.path}")
        if timestamps and timestamp < timestamps[-1]:
            raise InvalidOffsetError(
                f"Attempt to append a timestamp ({timestamp}) to slot {self.entries} no larger than the last "
                f"timestamp appended ({timestamps[-1]}) to {self.path}")
        last_timestamp = timestamps[-1] if timestamps else NO_TIMESTAMP
        if timestamp <= last_timestamp:
            return  # only a larger timestamp is indexed; an empty index holds none below NO_TIMESTAMP
        timestamps.append(timestamp)
        relative.append(rel)
        (self._file or self._writer()).write(TIME_ENTRY.pack(timestamp, rel))

    def truncate_to(self, offset: int) -> None:
        rel = offset - self.base_offset
        keep = len(self._relative)
        while keep and self._relative[keep - 1] >= rel:
            keep -= 1
        if keep == len(self._relative):
            return
        del self._timestamps[keep:]
        del self._relative[keep:]
        self._close_file()
        cow.make_private(self.path)
        with open(self.path, "r+b") as f:
            f.truncate(keep * TIME_ENTRY_SIZE)

    @property
    def entries(self) -> int:
        return len(self._timestamps)

    @property
    def is_full(self) -> bool:
        # TimeIndex.isFull: the last slot stays free for the entry a roll or a recovery adds.
        return len(self._timestamps) >= self.max_entries - 1

    def last_entry(self) -> tuple[int, int] | None:
        if not self._timestamps:
            return None
        return self._timestamps[-1], self.base_offset + self._relative[-1]

    def all_entries(self) -> list[tuple[int, int]]:
        return [(ts, self.base_offset + r) for ts, r in zip(self._timestamps, self._relative)]

    def lookup(self, timestamp: int) -> tuple[int, int] | None:
        """Greatest entry with timestamp <= target, or None (then: start of the segment)."""
        lo, hi, found = 0, len(self._timestamps) - 1, -1
        while lo <= hi:
            mid = (lo + hi) >> 1
            if self._timestamps[mid] <= timestamp:
                found, lo = mid, mid + 1
            else:
                hi = mid - 1
        if found < 0:
            return None
        return self._timestamps[found], self.base_offset + self._relative[found]

    def size_in_bytes(self) -> int:
        return len(self._timestamps) * TIME_ENTRY_SIZE
