"""One log segment: a `.log` file of record batches plus its `.index` and `.timeindex`.

The segment owns the byte-level rules Kafka applies to one file:
- append whole batches at the end, adding a sparse index entry (last offset of the append,
  position where it starts — one entry for an append of many batches, as Kafka's LogSegment.append)
  once more than `index.interval.bytes` were appended since the previous entry — checked before
  the append's own bytes are counted, so the first append never gets an entry; recovery rebuilds
  the indexes batch by batch (as Kafka's LogSegment.recover), so a follower's rebuilt index can
  be denser than the one its appends wrote;
- roll checks (`should_roll`) run before an append, so an append never finds an index full; a
  segment truncated to empty starts its `segment.ms` clock again;
- translate an offset into a file position (index lookup, then a forward scan of batch headers);
- recover: re-validate every batch, rebuild both indexes, cut the file at the first bad byte;
- truncate to an offset, index included;
- never modify a file in place while an engine checkpoint shares it by hard link: appends,
  truncations and index rebuilds copy it first (engine.storage.cow).

Files are named by the base offset zero-padded to 20 digits, e.g. `00000000000000170210.log`.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field

from engine.storage import cow
from engine.storage import record_batch as rb
from engine.storage.index import CorruptIndexError, IndexFullError, IndexLookup, OffsetIndex, TimeIndex
from engine.storage.log_config import LogConfig

HEADER_SCAN_BYTES = 16 * 1024  # read size of a header scan (_iter_headers)

LOG_SUFFIX, INDEX_SUFFIX, TIME_INDEX_SUFFIX = ".log", ".index", ".timeindex"
INT32_MAX = 2**31 - 1


def filename_prefix(offset: int) -> str:
    """Kafka's segment file prefix: the offset in 20 digits, zero-padded."""
    return f"{offset:020d}"


@dataclass(slots=True)
class ScanStep:
    """One batch header the forward scan looked at."""
    position: int
    base_offset: int
    last_offset: int
    size: int


@dataclass(slots=True)
class Location:
    """Where an offset was found inside a segment, and how (for the lookup lesson)."""
    segment_base_offset: int
    index: IndexLookup
    scan: list[ScanStep] = field(default_factory=list)
    position: int = -1           # position of the batch holding the offset; -1 if past the end
    batch_base_offset: int = -1
    batch_last_offset: int = -1
    batch_size: int = 0


class LogSegment:
    def __init__(self, directory: str, base_offset: int, config: LogConfig, *, created_ms: int = 0,
                 file_suffix: str = "") -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.config = config
        # "" for a live segment; ".cleaned" or ".swap" while the log cleaner builds and swaps one in
        # (Kafka's LogFileUtils.CLEANED_FILE_SUFFIX / SWAP_FILE_SUFFIX after each file's own suffix).
        self.file_suffix = file_suffix
        prefix = os.path.join(directory, filename_prefix(base_offset))
        self.log_path = prefix + LOG_SUFFIX + file_suffix
        self.index_path = prefix + INDEX_SUFFIX + file_suffix
        self.time_index_path = prefix + TIME_INDEX_SUFFIX + file_suffix
        self.offset_index = OffsetIndex(self.index_path, base_offset, config.segment_index_bytes)
        self.time_index = TimeIndex(self.time_index_path, base_offset, config.segment_index_bytes)
        self.size = 0
        self.next_offset = base_offset          # last offset in this segment + 1
        self.max_timestamp = rb.NO_TIMESTAMP    # largest record timestamp so far
        self.offset_of_max_timestamp = base_offset
        self.rolling_based_timestamp: int | None = None  # max timestamp of the first append
        self.created_ms = created_ms
        self.bytes_since_last_index_entry = 0
        self._fd: int | None = None

    # -- creation and loading ---------------------------------------------------------------
    @classmethod
    def create(cls, directory: str, base_offset: int, config: LogConfig, *, created_ms: int = 0,
               file_suffix: str = "") -> LogSegment:
        seg = cls(directory, base_offset, config, created_ms=created_ms, file_suffix=file_suffix)
        for path in (seg.log_path, seg.index_path, seg.time_index_path):
            cow.create_empty(path)  # a new inode, never one a checkpoint shares (engine.storage.cow)
        return seg

    @classmethod
    def open_existing(cls, directory: str, base_offset: int, config: LogConfig, *, created_ms: int = 0,
                      file_suffix: str = "") -> LogSegment:
        seg = cls(directory, base_offset, config, created_ms=created_ms, file_suffix=file_suffix)
        seg.size = os.path.getsize(seg.log_path)
        return seg

    def load_indexes(self) -> bool:
        """Load both indexes from disk; False if either is missing or fails its sanity check."""
        try:
            self.offset_index.load()
            self.time_index.load()
        except (FileNotFoundError, CorruptIndexError):
            return False
        if self.offset_index.entries and self.offset_index.entry(self.offset_index.entries - 1)[1] >= self.size:
            return False  # an entry points past the end of the log file
        return True

    def scan_headers(self) -> None:
        """Learn next offset and max timestamp from batch headers, without CRC checks.

        Used for segments below the recovery point, which were flushed and need no validation.
        Raises CorruptRecordError if the file does not parse (the log then recovers it).
        """
        end = self.size
        next_offset, max_ts, offset_of_max = self.base_offset, rb.NO_TIMESTAMP, self.base_offset
        first_max_ts = None
        contiguous = "compact" not in self.config.cleanup_policy
        for position, header in self._iter_headers(0, end):
            if header.size_in_bytes > end - position:
                raise rb.CorruptRecordError(f"{self.log_path}: partial batch at position {position}")
            if header.base_offset < next_offset or header.last_offset_delta < 0 or (
                    contiguous and header.base_offset != next_offset):
                raise rb.CorruptRecordError(f"{self.log_path}: batch at position {position} has base offset "
                                            f"{header.base_offset}, expected {next_offset}")
            if first_max_ts is None:
                first_max_ts = header.max_timestamp
            if header.max_timestamp > max_ts:
                max_ts, offset_of_max = header.max_timestamp, header.last_offset
            next_offset = header.last_offset + 1
        self.next_offset, self.max_timestamp, self.offset_of_max_timestamp = next_offset, max_ts, offset_of_max
        self.rolling_based_timestamp = first_max_ts
        self.bytes_since_last_index_entry = self._bytes_after_last_index_entry()

    def _bytes_after_last_index_entry(self) -> int:
        if not self.offset_index.entries:
            return self.size
        return self.size - self.offset_index.entry(self.offset_index.entries - 1)[1]

    # -- append -----------------------------------------------------------------------------
    def append(self, data: bytes | bytearray | memoryview, batches: list[rb.BatchHeader]) -> None:
        """Append already-validated batches (their headers in `batches`) at the end of the file.

        As Kafka's LogSegment.append: the append is one chunk, indexed at most once — (its last
        offset, the position where it starts) — so a fetch response a follower appends whole takes
        one index slot however many batches it holds. Everything that could refuse the append is
        checked before a byte is written: a refused append leaves the segment as it was."""
        if not batches:
            return
        last = batches[-1].last_offset
        if not 0 <= last - self.base_offset <= INT32_MAX:
            raise ValueError(f"offset {last} cannot be stored relative to base {self.base_offset}")
        position = self.size
        needs_index_entry = self.bytes_since_last_index_entry > self.config.index_interval_bytes
        if needs_index_entry and (self.offset_index.is_full or self.time_index.is_full):
            raise IndexFullError(f"{self.log_path}: the segment's index is full; the log rolls before this append")
        max_timestamp, offset_of_max = rb.NO_TIMESTAMP, -1
        for header in batches:  # the earliest batch holding the largest timestamp, as Kafka's LogAppendInfo
            if header.max_timestamp > max_timestamp:
                max_timestamp, offset_of_max = header.max_timestamp, header.last_offset
        fd = self._fd
        os.pwrite(self._writable_fd() if fd is None else fd, data, position)
        if position == 0:
            self.rolling_based_timestamp = max_timestamp
        if max_timestamp > self.max_timestamp:
            self.max_timestamp, self.offset_of_max_timestamp = max_timestamp, offset_of_max
        if needs_index_entry:
            self.offset_index.append(last, position)
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
            self.bytes_since_last_index_entry = 0
        size = len(data)
        self.size = position + size
        self.bytes_since_last_index_entry += size
        self.next_offset = last + 1

    def should_roll(self, incoming_size: int, incoming_max_timestamp: int, incoming_last_offset: int,
                    now_ms: int) -> str | None:
        """Why the segment must roll before this append (Kafka's LogSegment.shouldRoll), or None.

        The log refuses an append larger than segment.bytes before asking (RECORD_LIST_TOO_LARGE),
        so the size rule never rolls an empty segment."""
        config = self.config
        if self.size > config.segment_bytes - incoming_size:
            return "segment.bytes"
        if self.size > 0 and self._time_waited_for_roll(incoming_max_timestamp, now_ms) > \
                config.segment_ms - config.segment_jitter_ms:
            return "segment.ms"
        if self.offset_index.is_full:
            return "offset index full"
        if self.time_index.is_full:
            return "time index full"
        if incoming_last_offset - self.base_offset > INT32_MAX:
            return "relative offset overflow"
        return None

    def _time_waited_for_roll(self, incoming_max_timestamp: int, now_ms: int) -> int:
        # Record time, not the wall clock: only records without timestamps fall back to it.
        if self.rolling_based_timestamp is not None and self.rolling_based_timestamp >= 0:
            return incoming_max_timestamp - self.rolling_based_timestamp
        return now_ms - self.created_ms

    def on_become_inactive(self) -> None:
        """On roll: a last time-index entry for the segment's max timestamp (Kafka does the same)."""
        if self.max_timestamp >= 0:
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp, skip_full_check=True)
        self.sync_files()

    # -- lookup and read --------------------------------------------------------------------
    def locate(self, offset: int, *, trace: bool = False) -> Location:
        """Find the batch holding `offset`: sparse index first, then a forward header scan."""
        hit = self.offset_index.lookup(offset, trace=trace)
        loc = Location(self.base_offset, hit)
        for position, header in self._iter_headers(hit.position, self.size):
            if trace:
                loc.scan.append(ScanStep(position, header.base_offset, header.last_offset, header.size_in_bytes))
            if header.last_offset >= offset:
                loc.position = position
                loc.batch_base_offset, loc.batch_last_offset = header.base_offset, header.last_offset
                loc.batch_size = header.size_in_bytes
                break
        return loc

    def read_chunk(self, position: int, max_bytes: int, max_offset: int) -> tuple[bytes, int]:
        """Whole batches from `position`: at least one (if any), then up to `max_bytes`, and only
        batches whose last offset is below `max_offset`. Returns (bytes, next offset after them)."""
        fd = self._reader()
        first = os.pread(fd, rb.RECORD_BATCH_OVERHEAD, position)
        if len(first) < rb.RECORD_BATCH_OVERHEAD:
            return b"", -1
        header = rb.read_batch_header(first)
        if header.last_offset >= max_offset:
            return b"", -1
        want = max(max_bytes, header.size_in_bytes)
        data = os.pread(fd, min(want, self.size - position), position)
        end, next_offset = _whole_batches_end(data, max_offset)
        return (data if end == len(data) else data[:end]), next_offset

    def read_bytes(self, position: int = 0, size: int | None = None) -> bytes:
        """The file's bytes from `position` (to the end by default): the log cleaner reads whole batches."""
        end = self.size if size is None else min(self.size, position + size)
        return os.pread(self._reader(), max(0, end - position), position) if end > position else b""

    def find_offset_by_timestamp(self, timestamp: int, start_offset: int) -> int | None:
        """First offset >= start_offset whose record timestamp >= `timestamp` (None if none here)."""
        if self.max_timestamp < timestamp:
            return None
        entry = self.time_index.lookup(timestamp)
        position = 0 if entry is None else self.offset_index.lookup(entry[1]).position
        for pos, header in self._iter_headers(position, self.size):
            if header.max_timestamp < timestamp:
                continue
            data = os.pread(self._reader(), header.size_in_bytes, pos)
            _, records = rb.decode_batch(data, verify_crc=False)
            for record in records:
                if record.timestamp >= timestamp and record.offset >= start_offset:
                    return record.offset
        return None

    def _iter_headers(self, position: int, end: int):
        """(position, header) for each batch in [position, end), reading only the headers.

        The file is read HEADER_SCAN_BYTES at a time, not one pread per header: a scan from an
        index entry walks up to index.interval.bytes of small batches, and a follower's every
        fetch does one."""
        fd = self._reader()
        size = rb.RECORD_BATCH_OVERHEAD
        buf, buf_start = b"", position
        while position + size <= end:
            at = position - buf_start
            if at + size > len(buf):
                buf, buf_start, at = os.pread(fd, min(HEADER_SCAN_BYTES, end - position), position), position, 0
            try:
                header = rb.read_batch_header(buf, at)
            except rb.CorruptRecordError:
                header = rb.read_batch_header(os.pread(fd, size, position))  # the error as a lone read gives it
            yield position, header
            position += header.size_in_bytes

    # -- recovery and truncation ------------------------------------------------------------
    def recover(self, max_message_bytes: int) -> int:
        """Re-validate every batch, rebuild both indexes; cut at the first bad byte.

        Returns the number of bytes truncated (0 for a healthy segment).
        """
        self.offset_index.reset()
        self.time_index.reset()
        self.size = os.path.getsize(self.log_path)
        self.next_offset, self.max_timestamp = self.base_offset, rb.NO_TIMESTAMP
        self.offset_of_max_timestamp, self.rolling_based_timestamp = self.base_offset, None
        self.bytes_since_last_index_entry = 0
        valid_end, expected = 0, self.base_offset
        fd = self._reader()
        file_size = self.size
        while valid_end < file_size:
            header = self._valid_batch_at(fd, valid_end, file_size, expected, max_message_bytes)
            if header is None:
                break
            self._index_recovered_batch(header, valid_end)
            valid_end += header.size_in_bytes
            expected = header.last_offset + 1
        self.size = valid_end
        self.next_offset = expected
        # As a roll does (on_become_inactive), and as Kafka's LogSegment.recover: a last time index
        # entry for the largest timestamp, in the slot the full check keeps free for it.
        if self.max_timestamp >= 0:
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp, skip_full_check=True)
        self.sync_files()
        truncated = file_size - valid_end
        if truncated:
            self._close_fds()
            cow.make_private(self.log_path)
            os.truncate(self.log_path, valid_end)
        return truncated

    def _valid_batch_at(self, fd: int, position: int, file_size: int, expected_offset: int,
                        max_message_bytes: int) -> rb.BatchHeader | None:
        raw = os.pread(fd, rb.RECORD_BATCH_OVERHEAD, position)
        try:
            header = rb.read_batch_header(raw)
        except rb.CorruptRecordError:
            return None
        size = header.size_in_bytes
        if size > file_size - position or size > max(max_message_bytes, rb.RECORD_BATCH_OVERHEAD) + rb.LOG_OVERHEAD:
            return None
        if header.base_offset < expected_offset or header.last_offset_delta < 0:
            return None
        # baseOffset is outside the CRC. A log that is never compacted has no offset gaps, so a
        # batch must start exactly where the previous one ended; that catches a damaged header.
        if "compact" not in self.config.cleanup_policy and header.base_offset != expected_offset:
            return None
        if header.last_offset - self.base_offset > INT32_MAX:
            return None
        data = os.pread(fd, size, position)
        if not rb.batch_crc_ok(data, 0, header):
            return None
        return header

    def _index_recovered_batch(self, header: rb.BatchHeader, position: int) -> None:
        if self.rolling_based_timestamp is None:
            self.rolling_based_timestamp = header.max_timestamp
        if header.max_timestamp > self.max_timestamp:
            self.max_timestamp, self.offset_of_max_timestamp = header.max_timestamp, header.last_offset
        # Recovery indexes batch by batch (Kafka too), appends chunk by chunk: a segment filled by
        # multi-batch follower appends can hold more batches than its index has slots. Kafka's
        # recover would throw on the full index (its 10 MiB default never fills); here the
        # rebuilt index just stops growing — sparser, still correct.
        full = self.offset_index.is_full or self.time_index.is_full
        if self.bytes_since_last_index_entry > self.config.index_interval_bytes and not full:
            self.offset_index.append(header.last_offset, position)
            self.time_index.maybe_append(self.max_timestamp, self.offset_of_max_timestamp)
            self.bytes_since_last_index_entry = 0
        self.bytes_since_last_index_entry += header.size_in_bytes

    def truncate_to(self, offset: int, now_ms: int | None = None) -> int:
        """Remove every record at offset >= `offset`; returns bytes removed.

        Kafka cuts the file at the start of the batch holding `offset`. In replication the target
        is always a batch boundary (every replica holds the leader's batches byte for byte), so
        that is all that happens. A direct call may aim inside a batch; then the records below
        the target are kept by writing that batch's prefix back as a batch of its own (same base
        offset, epoch, producer fields, timestamps), so the log ends exactly at `offset`.

        A segment left empty starts over, as Kafka's LogSegment.truncateTo: its creation time
        becomes `now_ms` and its roll time is taken again from the next append, so `segment.ms`
        counts from then, not from when the segment was first created.
        """
        if offset >= self.next_offset:
            return 0
        loc = self.locate(offset)
        if loc.position < 0:
            return 0
        cut, size_before = loc.position, self.size
        prefix = self._batch_prefix_below(loc, offset) if loc.batch_base_offset < offset else b""
        self._close_fds()
        cow.make_private(self.log_path)  # a sealed segment's file may be shared with a checkpoint
        os.truncate(self.log_path, cut)
        # By offset, as Kafka: an entry's offset is the last of an appended chunk that may start
        # before the cut, so its position alone would keep an entry past the new log end.
        self.offset_index.truncate_to(loc.batch_base_offset)
        self.time_index.truncate_to(loc.batch_base_offset)
        self.size = cut
        if prefix:
            os.pwrite(self._writable_fd(), prefix, cut)
            self.size += len(prefix)
        # Re-derive what the cut invalidated (next offset, max timestamp) from what remains.
        self.scan_headers()
        if self.size == 0:
            self.rolling_based_timestamp = None
            if now_ms is not None:
                self.created_ms = now_ms
        return size_before - self.size

    def _batch_prefix_below(self, loc: Location, offset: int) -> bytes:
        data = os.pread(self._reader(), loc.batch_size, loc.position)
        header, records = rb.decode_batch(data, verify_crc=False)
        kept = [r for r in records if r.offset < offset]
        if not kept:
            return b""
        return rb.encode_batch(
            kept, base_offset=header.base_offset, base_timestamp=header.base_timestamp,
            partition_leader_epoch=header.partition_leader_epoch, producer_id=header.producer_id,
            producer_epoch=header.producer_epoch, base_sequence=header.base_sequence,
            is_transactional=header.is_transactional, compression=header.compression,
            timestamp_type=header.timestamp_type)

    # -- files ------------------------------------------------------------------------------
    def _reader(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.log_path, os.O_RDWR | os.O_CREAT, 0o644)
        return self._fd

    def _writable_fd(self) -> int:
        """The descriptor appends go through. Appending to a file a checkpoint shares is safe: a
        checkpoint records how long the file was when it linked it, and a restore copies only that
        prefix (engine.checkpoint); what changes bytes already written — a truncation — copies a
        shared file first (engine.storage.cow), and closes the descriptors on the old inode."""
        return self._reader()

    def _close_fds(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __getstate__(self) -> dict:
        # A descriptor is this process's handle on one inode: in a restored graph (engine.checkpoint)
        # the number would be stale, or another file's. The restored segment reopens by path.
        state = self.__dict__.copy()
        state["_fd"] = None
        return state

    def sync_files(self) -> None:
        """Make the index files on disk current (for tools that read them while the log runs)."""
        self.offset_index.sync()
        self.time_index.sync()

    def flush(self) -> None:
        if self._fd is not None:
            os.fsync(self._fd)
        self.offset_index.flush()
        self.time_index.flush()

    def close(self) -> None:
        self._close_fds()
        self.offset_index.close()
        self.time_index.close()

    def change_file_suffixes(self, old_suffix: str, new_suffix: str) -> None:
        """Rename the segment's three files from `old_suffix` to `new_suffix` (LogSegment.changeFileSuffixes:
        ".cleaned" -> ".swap" -> "" as the cleaner swaps a segment in). A rename keeps the inode, so
        a checkpoint's hard link is untouched; the descriptors are reopened by the new paths."""
        if self.file_suffix != old_suffix:
            raise ValueError(f"{self.log_path}: the segment's files end in {self.file_suffix!r}, not {old_suffix!r}")
        self.sync_files()
        self.close()
        renamed = []
        for path in (self.log_path, self.index_path, self.time_index_path):
            target = path[:len(path) - len(old_suffix)] + new_suffix if old_suffix else path + new_suffix
            os.replace(path, target)
            renamed.append(target)
        self.log_path, self.index_path, self.time_index_path = renamed
        self.offset_index.path, self.time_index.path = self.index_path, self.time_index_path
        self.file_suffix = new_suffix

    def delete(self) -> None:
        self.close()
        for path in (self.log_path, self.index_path, self.time_index_path):
            try:
                os.remove(path)
            except FileNotFoundError:
                pass

    @property
    def is_empty(self) -> bool:
        return self.size == 0

    def largest_timestamp(self) -> int:
        """For retention: the largest record timestamp (creation time if the segment has none)."""
        return self.max_timestamp if self.max_timestamp >= 0 else self.created_ms

    def __repr__(self) -> str:
        return f"LogSegment(base_offset={self.base_offset}, size={self.size}, next_offset={self.next_offset})"


def _whole_batches_end(data: bytes, max_offset: int) -> tuple[int, int]:
    """End of the whole batches at the front of `data` that lie below `max_offset`.

    A read slice may end inside a batch (Kafka's fetch does the same); that tail is dropped here.
    Returns (end position, next offset after the last whole batch), or (0, -1) if none.
    """
    end, next_offset, limit = 0, -1, len(data)
    while end + rb.RECORD_BATCH_OVERHEAD <= limit:
        header = rb.read_batch_header(data, end)
        if header.last_offset >= max_offset or end + header.size_in_bytes > limit:
            break
        end += header.size_in_bytes
        next_offset = header.last_offset + 1
    return end, next_offset
