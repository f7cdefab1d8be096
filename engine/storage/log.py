"""A partition's log: an ordered list of segments in one directory, as Kafka keeps it on disk.

    <dir>/00000000000000000000.log  .index  .timeindex
    <dir>/00000000000000170210.log  .index  .timeindex   <- active segment (the last one)

What the log owns, and the invariants it keeps:
- offsets: `log_start_offset <= high_watermark <= log_end_offset`; every batch on disk has a
  base offset at or above the end of the batch before it;
- appends: the broker side appends *already-encoded* batches. It checks each batch (CRC,
  structure; a leader's against max.message.bytes, and record by record as Kafka's LogValidator:
  one batch, its count, keys on a compacted topic — engine.storage.log_validator), refuses an
  append larger than segment.bytes (RECORD_LIST_TOO_LARGE), then, as a leader, assigns offsets
  by rewriting the header's baseOffset (not covered by the CRC) and stamps the partition leader
  epoch; as a follower it keeps the leader's offsets. Nothing is written before every check
  passed. Records are re-encoded only by a leader whose topic's `compression.type` asks for
  another codec than the batch's (log_validator.recompress_for_topic). `append(records)` is the
  producer-side convenience: it encodes batches first, then appends them the same way;
- segment roll, checked only when an append arrives (`segment.bytes`, `segment.ms` by record
  time, a full index) — so an idle partition never rolls and keeps its old records;
- lookup: binary search of segment base offsets, then the sparse offset index, then a forward
  scan of batch headers (`locate()` returns that path for the lesson that shows it);
- retention (`delete_old_segments`): whole segments, oldest first, never past the high watermark;
  a breached active segment goes only after an empty one is rolled, so a log always has one;
- flush model: `recovery_point` is the offset below which everything was flushed; recovery
  on open validates from there, cuts a torn or corrupt tail, rebuilds missing/corrupt indexes;
- `truncate_to(offset)` for replication: later segments removed, the rest cut, index included;
- a log that recovers to an end below its checkpointed log start starts again, empty, there.

Time comes from the `clock_ms` callable, so a simulated cluster can run the log on virtual time.

Where the engine differs from Kafka on purpose (tests/engine/kafka_parity pins both sides):
- a Log used on its own lets its high watermark follow the log end until `update_high_watermark`
  is first called (a lesson's bare log reads what it wrote); the replication layer always sets it;
- `maybe_increment_log_start_offset` stops at the high watermark instead of raising
  OffsetOutOfRangeException: its callers (DeleteRecords, a follower) already bound the offset;
- `segment.jitter.ms` is the jitter itself, not a random draw below it: a run is repeatable;
- `truncate_to` aimed inside a batch keeps the records below the target (segment.py says how);
  Kafka removes the whole batch. Replication only ever truncates at batch boundaries;
- a leader never renumbers records, and recompresses only for a topic `compression.type` other than
  `producer` and the batch's codec (log_validator.py); recovery that finds more
  batches than a full index can take stops adding entries where Kafka's would throw (segment.py).
"""
from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import NamedTuple

from engine.storage import batch_records, cow
from engine.storage import record_batch as rb
from engine.storage.compression import TOPIC_PRODUCER
from engine.storage.errors import (
    InvalidRecordError,
    LogClosedError,
    OffsetOutOfRangeError,
    RecordBatchTooLargeError,
)
from engine.storage.index import IndexLookup
from engine.storage.log_config import LogConfig
from engine.storage.log_events import (
    LogFlushed,
    LogRecovered,
    LogStartOffsetIncremented,
    LogTruncated,
    SegmentDeleted,
    SegmentRolled,
)
from engine.storage.log_validator import (
    analyze_and_validate_records,
    recompress_for_topic,
    validate_leader_append,
)
from engine.storage.segment import LOG_SUFFIX, Location, LogSegment, ScanStep

SEGMENT_FILE = re.compile(r"^(\d{20})\.(log|index|timeindex)$")
# Kafka's LogFileUtils suffixes: a segment the cleaner is writing, one being swapped in, one on its way out.
CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX, DELETED_FILE_SUFFIX = ".cleaned", ".swap", ".deleted"
STRAY_SUFFIXES = (DELETED_FILE_SUFFIX, CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
DEFAULT_MAX_READ_BYTES = 1024 * 1024
PRODUCER_BATCH_BYTES = 16384  # batch.size: how append(records) splits a large list into batches


class AppendInfo(NamedTuple):
    """What an append wrote (Kafka's LogAppendInfo, the fields the engine reads). A NamedTuple:
    immutable like a frozen dataclass, and built in a third of its time, once per append."""
    first_offset: int
    last_offset: int
    records_count: int
    max_timestamp: int
    bytes_appended: int
    batches: int


@dataclass(frozen=True, slots=True)
class FetchData:
    """Raw batches read from the log, as a fetch response carries them."""
    records: bytes
    next_offset: int           # offset after the last whole batch returned (== fetch offset if none)
    log_start_offset: int
    log_end_offset: int
    high_watermark: int


@dataclass(slots=True)
class OffsetLookup:
    """The path a read takes to an offset: segment search, index lookup, forward scan."""
    offset: int
    segment_probes: list[tuple[int, int]] = field(default_factory=list)  # (slot, base offset) visited
    segment_base_offset: int = -1
    index: IndexLookup | None = None
    scan: list[ScanStep] = field(default_factory=list)
    position: int = -1
    batch_base_offset: int = -1
    batch_last_offset: int = -1
    record: rb.Record | None = None


class Log:
    def __init__(self, path: str, config: dict | LogConfig | None = None, *,
                 recovery_point: int | None = None,
                 log_start_offset: int | None = None,
                 high_watermark: int | None = None,
                 clock_ms: Callable[[], int] | None = None,
                 fsync: bool = True,
                 listener: Callable[[object], None] | None = None) -> None:
        """Open (or create) the log in `path`, recovering anything not known to be flushed.

        `recovery_point` comes from the broker's recovery-point checkpoint; None means no
        checkpoint, so every segment is validated, as Kafka does for a log it has no entry for.
        A log used on its own treats each append as committed (the high watermark follows the
        log end); once `update_high_watermark` is called, the replication layer owns it.
        """
        self.path = path
        self.config = LogConfig.from_dict(config)
        self._clock = clock_ms or (lambda: int(time.time() * 1000))
        self._fsync = fsync
        self._listener = listener
        self._closed = False
        self._segments: list[LogSegment] = []
        self._bases: list[int] = []
        self._hw_follows_leo = high_watermark is None
        self._last_flush_ms = self._clock()
        os.makedirs(path, exist_ok=True)
        self.recovery_point = self._load(recovery_point or 0, log_start_offset or 0)
        self.log_start_offset = max(log_start_offset or 0, self._bases[0])
        self._high_watermark = self.log_start_offset if high_watermark is None else high_watermark
        self._high_watermark = min(max(self._high_watermark, self.log_start_offset), self.log_end_offset)

    # -- state ------------------------------------------------------------------------------
    @property
    def log_end_offset(self) -> int:
        return self._segments[-1].next_offset

    @property
    def high_watermark(self) -> int:
        return self.log_end_offset if self._hw_follows_leo else self._high_watermark

    @property
    def segments(self) -> tuple[LogSegment, ...]:
        return tuple(self._segments)

    @property
    def active_segment(self) -> LogSegment:
        return self._segments[-1]

    def size_in_bytes(self) -> int:
        return sum(s.size for s in self._segments)

    def update_high_watermark(self, offset: int) -> int:
        """Set the HW (clamped to [log_start_offset, log_end_offset]); the caller owns it from now on."""
        self._hw_follows_leo = False
        self._high_watermark = min(max(offset, self.log_start_offset), self.log_end_offset)
        return self._high_watermark

    # -- append -----------------------------------------------------------------------------
    def append(self, records: Iterable, *, timestamp_ms: int | None = None, leader_epoch: int = -1) -> int:
        """Producer-side convenience: encode records into batches of up to batch.size, append them.

        `records` are `(key, value)`, `(key, value, timestamp[, headers])` or `Record`s; keys and
        values are bytes or None (a None value is a tombstone). Returns the first offset.
        """
        now = self._clock() if timestamp_ms is None else timestamp_ms
        first = None
        for chunk in _producer_batches(records):
            batch = rb.encode_batch(chunk, base_timestamp=now)
            info = self.append_batches(batch, leader_epoch=leader_epoch)
            if first is None:
                first = info.first_offset
        if first is None:
            raise InvalidRecordError("append() needs at least one record")
        return first

    def append_batches(self, data: bytes | bytearray | memoryview, *, leader_epoch: int | None = None,
                       assign_offsets: bool = True) -> AppendInfo:
        """Append one or more encoded batches (a produce request's records for this partition).

        As leader (`assign_offsets`): offsets are assigned from the log end by rewriting each
        header's baseOffset; `leader_epoch` is stamped into partitionLeaderEpoch. As follower:
        the leader's offsets and epochs are kept, and must continue from the log end.
        """
        if self._closed:
            self._check_open()
        buf = bytearray(data)
        config = self.config
        segment = self._segments[-1]
        # Each batch's header is parsed here; every step below reads these headers.
        if assign_offsets:
            headers = validate_leader_append(buf, config.max_message_bytes,
                                             compacted="compact" in config.cleanup_policy)
            if config.compression_type != TOPIC_PRODUCER:   # the default keeps the producer's bytes
                buf, headers = recompress_for_topic(buf, headers, config.compression_type,
                                                    config.compression_level_of, config.max_message_bytes)
            self._assign_offsets(buf, headers, leader_epoch, segment.next_offset)
        else:
            headers = analyze_and_validate_records(buf, None, increasing_offsets=True)
            if headers[0].base_offset < segment.next_offset:
                raise InvalidRecordError(f"follower append at offset {headers[0].base_offset} is below the "
                                         f"log end {segment.next_offset}")
        size = len(buf)
        if size > config.segment_bytes:
            # UnifiedLog.append: no segment could hold it, so no roll would help.
            raise RecordBatchTooLargeError(
                f"Message batch size is {size} bytes in append to {self.path}, which exceeds the maximum "
                f"configured segment size of {config.segment_bytes}.")
        if len(headers) == 1:   # a leader's append, and most of a follower's
            header = headers[0]
            first, max_ts, count = header.base_offset, header.max_timestamp, header.records_count
            last = first + header.last_offset_delta
        else:
            first, last = headers[0].base_offset, headers[-1].last_offset
            max_ts, count = max(h.max_timestamp for h in headers), sum(h.records_count for h in headers)
        reason = segment.should_roll(size, max_ts, last, self._clock())
        if reason is not None:
            segment = self._roll(reason, first)
        segment.append(buf, headers)
        if self._hw_follows_leo:
            self._high_watermark = segment.next_offset
        if segment.next_offset - self.recovery_point >= config.flush_messages:
            self.flush()
        return AppendInfo(first, last, count, max_ts, size, len(headers))

    def _assign_offsets(self, buf: bytearray, headers: list[rb.BatchHeader], leader_epoch: int | None,
                        next_offset: int) -> None:
        """Offsets from `next_offset` (the log end) and the leader epoch, written into each batch's
        header in place; each header is then read again from the bytes it describes."""
        position = 0
        now = self._clock() if self.config.message_timestamp_type == "LogAppendTime" else None
        for i, header in enumerate(headers):
            rb.set_base_offset_in_place(buf, position, next_offset)
            if leader_epoch is not None:
                rb.set_partition_leader_epoch_in_place(buf, position, leader_epoch)
            if now is not None:   # LogAppendTime
                rb.set_log_append_time_in_place(buf, position, header.size_in_bytes, now)
            headers[i] = rb.read_batch_header(buf, position)
            next_offset += header.last_offset_delta + 1
            position += header.size_in_bytes

    def roll(self, reason: str = "requested") -> LogSegment:
        """Close the active segment and start a new, empty one at the log end."""
        self._check_open()
        return self._roll(reason, self.log_end_offset)

    def _roll(self, reason: str, base_offset: int) -> LogSegment:
        # The new base is the first offset of the batch that triggered the roll: the log end for
        # a leader; a follower copying a compacted leader may start past it (a legal gap).
        old = self.active_segment
        new_base = max(base_offset, self.log_end_offset)
        if old.is_empty and old.base_offset == new_base:
            return old  # rolling an empty segment onto its own offset changes nothing
        old.on_become_inactive()
        new = LogSegment.create(self.path, new_base, self.config, created_ms=self._clock())
        self._segments.append(new)
        self._bases.append(new_base)
        # Kafka flushes the old segment in the background right after a roll; the recovery point
        # then moves to the new segment's base.
        self.flush(new_base)
        self._emit(SegmentRolled(new_base, old.base_offset, reason))
        return new

    # -- read -------------------------------------------------------------------------------
    def read(self, offset: int, max_bytes: int = DEFAULT_MAX_READ_BYTES, *,
             max_offset: int | None = None) -> list[rb.Record]:
        """Records from `offset` on, from whole batches of one segment, at least one batch, then
        up to `max_bytes`. Records below `offset` (the same batch) are dropped, as consumers do.
        `max_offset` bounds the read (a consumer's view stops at the high watermark)."""
        limit = self.log_end_offset if max_offset is None else max_offset
        while True:
            fetched = self.read_batches(offset, max_bytes, max_offset=max_offset)
            # The log's own segments: their CRCs were checked on append (and on recovery).
            records = batch_records.decode_records(fetched.records, offset, limit, batch_records.RECORD,
                                                   verify_crc=False, keep_control=True)
            if records or not fetched.records or fetched.next_offset <= offset:
                return records
            # A compacted log's batches may hold nothing at or after `offset` (the cleaner kept an
            # empty batch, or only records below it): go on from the batches' end, as a consumer
            # moves to the last batch's next offset (Kafka's CompletedFetch.nextFetchOffset).
            offset = fetched.next_offset

    def read_batches(self, offset: int, max_bytes: int = DEFAULT_MAX_READ_BYTES, *,
                     max_offset: int | None = None) -> FetchData:
        """Raw whole batches from the one segment holding `offset` (Kafka's fetch path)."""
        self._check_open()
        leo = self.log_end_offset
        if offset < self.log_start_offset or offset > leo:
            raise OffsetOutOfRangeError(offset, self.log_start_offset, leo)
        limit = leo if max_offset is None else min(max_offset, leo)
        data, next_offset = b"", offset
        if offset < limit:
            slot = self._floor_slot(offset)
            while slot < len(self._segments):
                segment = self._segments[slot]
                loc = segment.locate(offset)
                if loc.position >= 0:
                    data, after = segment.read_chunk(loc.position, max_bytes, limit)
                    next_offset = after if data else offset
                    break
                slot += 1  # offset lies past this segment's last batch: it starts the next one
        return FetchData(data, next_offset, self.log_start_offset, leo, self.high_watermark)

    def locate(self, offset: int) -> OffsetLookup:
        """The lookup path for `offset`, step by step, and the record found there."""
        self._check_open()
        leo = self.log_end_offset
        if offset < self.log_start_offset or offset >= leo:
            raise OffsetOutOfRangeError(offset, self.log_start_offset, leo)
        result = OffsetLookup(offset)
        slot = self._floor_slot(offset, probes=result.segment_probes)
        segment = self._segments[slot]
        loc: Location = segment.locate(offset, trace=True)
        result.segment_base_offset, result.index, result.scan = segment.base_offset, loc.index, loc.scan
        result.position = loc.position
        result.batch_base_offset, result.batch_last_offset = loc.batch_base_offset, loc.batch_last_offset
        if loc.position >= 0:
            records = self.read(offset, 1, max_offset=offset + 1)
            result.record = records[0] if records and records[0].offset == offset else None
        return result

    def offset_for_timestamp(self, timestamp: int) -> int | None:
        """First offset whose record timestamp is >= `timestamp` (ListOffsets by time), or None."""
        self._check_open()
        for segment in self._segments:
            if segment.max_timestamp >= timestamp:
                found = segment.find_offset_by_timestamp(timestamp, self.log_start_offset)
                if found is not None:
                    return found
        return None

    def _floor_slot(self, offset: int, probes: list | None = None) -> int:
        """Binary search of segment base offsets: the last segment whose base <= offset."""
        bases = self._bases
        lo, hi, found = 0, len(bases) - 1, 0
        while lo <= hi:
            mid = (lo + hi) >> 1
            if probes is not None:
                probes.append((mid, bases[mid]))
            if bases[mid] <= offset:
                found, lo = mid, mid + 1
            else:
                hi = mid - 1
        return found

    # -- retention --------------------------------------------------------------------------
    def delete_old_segments(self, now_ms: int | None = None) -> list[SegmentDeleted]:
        """Apply retention.ms, then retention.bytes, then the log start offset (Kafka's order)."""
        self._check_open()
        now = self._clock() if now_ms is None else now_ms
        deleted: list[SegmentDeleted] = []
        if "delete" in self.config.cleanup_policy:
            deleted += self._delete_retention_ms_breached(now)
            deleted += self._delete_retention_size_breached()
        deleted += self._delete_log_start_offset_breached()
        return deleted

    def _delete_retention_ms_breached(self, now: int) -> list[SegmentDeleted]:
        retention_ms = self.config.retention_ms
        if retention_ms < 0:
            return []
        return self._delete_segments(
            lambda seg, nxt: now - seg.largest_timestamp() > retention_ms, "retention.ms")

    def _delete_retention_size_breached(self) -> list[SegmentDeleted]:
        retention_bytes = self.config.retention_bytes
        if retention_bytes < 0 or self.size_in_bytes() < retention_bytes:
            return []
        excess = [self.size_in_bytes() - retention_bytes]

        def breached(seg: LogSegment, nxt: LogSegment | None) -> bool:
            if excess[0] - seg.size >= 0:
                excess[0] -= seg.size
                return True
            return False
        return self._delete_segments(breached, "retention.bytes")

    def _delete_log_start_offset_breached(self) -> list[SegmentDeleted]:
        start = self.log_start_offset
        return self._delete_segments(
            lambda seg, nxt: nxt is not None and nxt.base_offset <= start, "log start offset")

    def _delete_segments(self, predicate, reason: str) -> list[SegmentDeleted]:
        deletable = self._deletable_segments(predicate)
        if not deletable:
            return []
        if len(deletable) == len(self._segments):
            # A log always keeps a segment: roll an empty one first, so the breached active one can go.
            self.roll(f"retention ({reason})")
        events = []
        for segment in deletable:
            self._segments.remove(segment)
            self._bases.remove(segment.base_offset)
            events.append(SegmentDeleted(segment.base_offset, segment.next_offset, segment.size, reason))
            segment.delete()
            self._emit(events[-1])
        self._increment_log_start_offset(self._bases[0], f"segment deletion ({reason})")
        return events

    def _deletable_segments(self, predicate) -> list[LogSegment]:
        """Oldest first, stopping at the first segment that fails: predicate, HW bound, non-empty."""
        out = []
        hw = self.high_watermark
        for i, segment in enumerate(self._segments):
            nxt = self._segments[i + 1] if i + 1 < len(self._segments) else None
            upper_bound = nxt.base_offset if nxt is not None else self.log_end_offset
            is_last_and_empty = nxt is None and segment.is_empty
            if is_last_and_empty or hw < upper_bound or not predicate(segment, nxt):
                break
            out.append(segment)
        return out

    def _increment_log_start_offset(self, offset: int, reason: str) -> None:
        if offset > self.log_start_offset:
            self.log_start_offset = offset
            self._high_watermark = max(self._high_watermark, offset)
            self.recovery_point = max(self.recovery_point, offset)
            self._emit(LogStartOffsetIncremented(offset, reason))

    def maybe_increment_log_start_offset(self, offset: int, reason: str = "requested") -> None:
        """Move the log start forward (DeleteRecords, a follower tracking its leader); never past HW."""
        self._increment_log_start_offset(min(offset, self.high_watermark), reason)

    # -- compaction -------------------------------------------------------------------------
    def create_cleaned_segment(self, base_offset: int, created_ms: int) -> LogSegment:
        """An empty `.cleaned` segment the cleaner writes into (UnifiedLog.createNewCleanedSegment)."""
        self._check_open()
        return LogSegment.create(self.path, base_offset, self.config, created_ms=created_ms,
                                 file_suffix=CLEANED_FILE_SUFFIX)

    def replace_segments(self, cleaned: LogSegment, old: list[LogSegment], *, crash_at: str | None = None) -> None:
        """Swap a cleaned segment in for `old` (consecutive, not the active one), crash-safe as Kafka's
        LocalLog.replaceSegments: `.cleaned` -> `.swap`; the old files renamed `.deleted`, then removed
        (Kafka removes them after file.delete.delay.ms; here at once); `.swap` -> the live name. A
        crash between any two steps is finished or undone by the next load (`_recover_swap_files`).

        `crash_at` ("swap", "deleted", "removed") stops after that step, files left as they are and
        the log closed, for the tests that reload such a directory."""
        self._check_open()
        if not old or old[-1] is self.active_segment or cleaned.base_offset != old[0].base_offset:
            raise ValueError("replace_segments takes consecutive inactive segments starting at the cleaned one's base")
        if self._fsync:
            cleaned.flush()   # flushed before the swap (Cleaner.cleanSegments): a `.swap` is always whole
        cleaned.change_file_suffixes(CLEANED_FILE_SUFFIX, SWAP_FILE_SUFFIX)
        if crash_at == "swap":
            return self._stop_mid_swap(cleaned)
        for segment in old:
            segment.change_file_suffixes("", DELETED_FILE_SUFFIX)
        if crash_at == "deleted":
            return self._stop_mid_swap(cleaned)
        for segment in old:
            segment.delete()
        if crash_at == "removed":
            return self._stop_mid_swap(cleaned)
        cleaned.change_file_suffixes(SWAP_FILE_SUFFIX, "")
        first = self._segments.index(old[0])
        self._segments[first:first + len(old)] = [cleaned]
        self._bases[first:first + len(old)] = [cleaned.base_offset]

    def _stop_mid_swap(self, cleaned: LogSegment) -> None:
        cleaned.close()
        for segment in self._segments:
            segment.close()
        self._closed = True

    # -- truncation -------------------------------------------------------------------------
    def truncate_to(self, offset: int) -> LogTruncated:
        """Remove every record at or above `offset` (a follower matching its leader)."""
        self._check_open()
        if offset < 0:
            raise ValueError(f"cannot truncate to a negative offset ({offset})")
        leo = self.log_end_offset
        if offset >= leo:
            return LogTruncated(leo, leo, 0, 0)
        removed = self.records_from(max(offset, self.log_start_offset))
        size_before = self.size_in_bytes()
        if self._bases[0] > offset:
            self._truncate_fully_and_start_at(offset)
        else:
            while len(self._segments) > 1 and self._bases[-1] > offset:
                self._bases.pop()
                self._segments.pop().delete()
            self.active_segment.truncate_to(offset, self._clock())
        self.recovery_point = min(self.recovery_point, self.log_end_offset)
        self._high_watermark = min(self._high_watermark, self.log_end_offset)
        event = LogTruncated(leo, self.log_end_offset, len(removed), size_before - self.size_in_bytes(),
                             tuple((r.offset, r.key, r.value) for r in removed))
        self._emit(event)
        return event

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """Delete every segment and start empty at `offset` (a follower far behind its leader)."""
        self._check_open()
        self._truncate_fully_and_start_at(offset)

    def _truncate_fully_and_start_at(self, offset: int) -> None:
        for segment in self._segments:
            segment.delete()
        self._segments = [LogSegment.create(self.path, offset, self.config, created_ms=self._clock())]
        self._bases = [offset]
        self.log_start_offset = offset
        self.recovery_point = offset
        self._high_watermark = offset

    def records_from(self, offset: int) -> list[rb.Record]:
        out, leo = [], self.log_end_offset
        while offset < leo:
            chunk = self.read(offset, DEFAULT_MAX_READ_BYTES)
            if not chunk:
                break
            out.extend(chunk)
            offset = chunk[-1].offset + 1
        return out

    # -- flush, close, crash ----------------------------------------------------------------
    def flush(self, offset: int | None = None) -> None:
        """Make everything below `offset` (default: the log end) durable; move the recovery point."""
        self._check_open()
        target = self.log_end_offset if offset is None else min(offset, self.log_end_offset)
        if target <= self.recovery_point:
            return
        if self._fsync:
            for i, segment in enumerate(self._segments):
                end = self._segments[i + 1].base_offset if i + 1 < len(self._segments) else None
                if (end is None or end > self.recovery_point) and segment.base_offset < target:
                    segment.flush()
        self.recovery_point = target
        self._last_flush_ms = self._clock()
        self._emit(LogFlushed(target))

    def flush_if_due(self, now_ms: int) -> bool:
        """flush.ms: flush when that long has passed since the last flush (the broker's timer calls this)."""
        if now_ms - self._last_flush_ms >= self.config.flush_ms and self.log_end_offset > self.recovery_point:
            self.flush()
            return True
        return False

    def close(self) -> None:
        """Clean shutdown: flush everything, close the files."""
        if self._closed:
            return
        self.flush()
        self.active_segment.on_become_inactive()
        for segment in self._segments:
            segment.close()
        self._closed = True

    def close_after_crash(self, *, lose_unflushed: bool, durable_offset: int = 0) -> None:
        """Stop without a clean shutdown. A process crash keeps what was written (it is in the OS
        page cache); a power loss also loses every byte past the recovery point — or past
        `durable_offset`, if the caller knows more was fsynced (by an earlier incarnation)."""
        if self._closed:
            return
        for segment in self._segments:
            segment.close()
        if lose_unflushed:
            self._drop_unflushed_bytes(max(self.recovery_point, durable_offset))
        self._closed = True

    def _drop_unflushed_bytes(self, point: int) -> None:
        for segment in self._segments:
            if segment.base_offset >= point and segment.base_offset != self._bases[0]:
                segment.delete()
            elif segment.next_offset > point:
                position = segment.locate(point).position
                segment.close()
                cow.make_private(segment.log_path)  # it may be a checkpoint's hard link
                os.truncate(segment.log_path, segment.size if position < 0 else position)

    # -- loading and recovery ---------------------------------------------------------------
    def _load(self, recovery_point: int, log_start_offset: int) -> int:
        bases = self._scan_directory()
        if not bases:
            start = max(log_start_offset, 0)
            self._segments = [LogSegment.create(self.path, start, self.config, created_ms=self._clock())]
            self._bases = [start]
            return start
        now = self._clock()
        self._segments = [LogSegment.open_existing(self.path, b, self.config, created_ms=now) for b in bases]
        self._bases = list(bases)
        stats = {"recovered": 0, "truncated": 0, "deleted": 0, "rebuilt": 0}
        for i, segment in enumerate(self._segments):
            # A segment wholly below the recovery point was flushed: its headers are trusted.
            if not (self._load_flushed_segment(segment, stats) and segment.next_offset <= recovery_point):
                stats["recovered"] += 1
                truncated = segment.recover(self.config.max_message_bytes)
                if truncated:
                    stats["truncated"] += truncated
                    stats["deleted"] += self._drop_segments_after(i)
                    break
            if i + 1 < len(self._segments) and self._gap_after(segment, self._segments[i + 1]):
                # A segment cut at a batch boundary: later segments would leave a hole in the log.
                stats["recovered"] = max(stats["recovered"], 1)
                stats["deleted"] += self._drop_segments_after(i)
                break
        if self.log_end_offset < log_start_offset:
            # LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd: what is left ends below the
            # checkpointed log start, so none of it is readable; start empty at the log start.
            stats["recovered"] = max(stats["recovered"], 1)
            stats["deleted"] += len(self._segments)
            for segment in self._segments:
                segment.delete()
            self._segments = [LogSegment.create(self.path, log_start_offset, self.config, created_ms=now)]
            self._bases = [log_start_offset]
        if stats["recovered"]:
            self._emit(LogRecovered(recovery_point, stats["recovered"], stats["truncated"],
                                    stats["deleted"], stats["rebuilt"], self.log_end_offset))
        # Recovery validates but does not flush: the recovery point only moves when the log is
        # flushed, so a second crash before that recovers the same segments again (Kafka too).
        return min(max(recovery_point, self._bases[0]), self.log_end_offset)

    def _load_flushed_segment(self, segment: LogSegment, stats: dict) -> bool:
        """A segment below the recovery point: trust its batches; rebuild a bad index."""
        if not segment.load_indexes():
            stats["rebuilt"] += 1
            return False
        try:
            segment.scan_headers()
        except rb.CorruptRecordError:
            return False
        last = segment.time_index.last_entry()
        if last is not None and last[1] >= segment.next_offset:
            # A time-index entry past the log's end (a power loss cut the .log, not the
            # .timeindex): the index is rebuilt, as Kafka's TimeIndex.sanityCheck refuses an
            # index that does not fit its segment and LogLoader recovers the segment.
            stats["rebuilt"] += 1
            return False
        return True

    def _gap_after(self, segment: LogSegment, following: LogSegment) -> bool:
        """A log that is never compacted has no offset gaps: each segment ends where the next begins."""
        return "compact" not in self.config.cleanup_policy and segment.next_offset != following.base_offset

    def _drop_segments_after(self, slot: int) -> int:
        dropped = self._segments[slot + 1:]
        for segment in dropped:
            segment.delete()
        del self._segments[slot + 1:]
        del self._bases[slot + 1:]
        return len(dropped)

    def _recover_swap_files(self) -> None:
        """Finish or undo a cleaner's swap cut short by a crash, as Kafka's LogLoader.load does:
        `.deleted` and `.cleaned` files go (a `.swap` at or above the lowest `.cleaned` offset
        belonged to an unfinished operation and goes too, removeTempFilesAndCollectSwapFiles); a
        remaining `.swap` segment is complete (it was flushed before its rename), so the live
        segments it replaces — those whose base offset lies in [its base, its next offset) — are
        deleted and the `.swap` files renamed to their live names."""
        names = os.listdir(self.path)
        swaps: list[str] = []
        cleaned_offset: int | None = None
        for name in names:
            full = os.path.join(self.path, name)
            if name.endswith(DELETED_FILE_SUFFIX):
                os.remove(full)
            elif name.endswith(CLEANED_FILE_SUFFIX):
                offset = _offset_of(name)
                if offset is not None:
                    cleaned_offset = offset if cleaned_offset is None else min(cleaned_offset, offset)
                os.remove(full)
            elif name.endswith(SWAP_FILE_SUFFIX):
                swaps.append(name)
        valid = []
        for name in swaps:
            offset = _offset_of(name)
            if offset is None or (cleaned_offset is not None and offset >= cleaned_offset):
                os.remove(os.path.join(self.path, name))
            else:
                valid.append(name)
        low, high = None, None
        for name in valid:
            if name.endswith(LOG_SUFFIX + SWAP_FILE_SUFFIX):
                base = int(name[:20])
                segment = LogSegment.open_existing(self.path, base, self.config, file_suffix=SWAP_FILE_SUFFIX)
                try:
                    segment.scan_headers()
                except rb.CorruptRecordError:
                    segment.recover(self.config.max_message_bytes)
                segment.close()
                low = base if low is None else min(low, base)
                high = segment.next_offset if high is None else max(high, segment.next_offset)
        if low is not None and high is not None:
            for name in os.listdir(self.path):
                match = SEGMENT_FILE.match(name)
                if match and low <= int(match.group(1)) < high:
                    os.remove(os.path.join(self.path, name))
        for name in valid:
            os.replace(os.path.join(self.path, name), os.path.join(self.path, name[:-len(SWAP_FILE_SUFFIX)]))

    def _scan_directory(self) -> list[int]:
        self._recover_swap_files()
        bases: set[int] = set()
        others: set[int] = set()
        for name in os.listdir(self.path):
            match = SEGMENT_FILE.match(name)
            if not match:
                continue
            base = int(match.group(1))
            (bases if match.group(2) == LOG_SUFFIX[1:] else others).add(base)
        for orphan in others - bases:  # an index with no log left: nothing to index
            for suffix in (".index", ".timeindex"):
                path = os.path.join(self.path, f"{orphan:020d}{suffix}")
                if os.path.exists(path):
                    os.remove(path)
        return sorted(bases)

    # -- helpers ----------------------------------------------------------------------------
    def _emit(self, event: object) -> None:
        if self._listener is not None:
            self._listener(event)

    def _check_open(self) -> None:
        if self._closed:
            raise LogClosedError(f"the log in {self.path} is closed")

    def __repr__(self) -> str:
        return (f"Log({self.path!r}, log_start_offset={self.log_start_offset}, "
                f"high_watermark={self.high_watermark}, log_end_offset={self.log_end_offset}, "
                f"segments={len(self._segments)})")


def _offset_of(name: str) -> int | None:
    """The base offset a segment file's name starts with (LogFileUtils.offsetFromFile); None if none."""
    return int(name[:20]) if len(name) > 20 and name[:20].isdigit() and name[20] == "." else None


def _producer_batches(records: Iterable) -> Iterable[list]:
    """Group records into lists of about batch.size bytes, as the producer's accumulator would."""
    chunk: list = []
    size = 0
    for record in records:
        if isinstance(record, rb.Record):
            key, value = record.key, record.value
        else:
            key, value = record[0], record[1]
            if isinstance(key, str) or isinstance(value, str):  # text is sent as UTF-8, as a StringSerializer would
                key, value = _utf8(key), _utf8(value)
                record = (key, value, *record[2:])
        estimate = 21 + (len(key) if key else 0) + (len(value) if value else 0)
        if chunk and size + estimate > PRODUCER_BATCH_BYTES:
            yield chunk
            chunk, size = [], 0
        chunk.append(record)
        size += estimate
    if chunk:
        yield chunk


def _utf8(data: bytes | str | None) -> bytes | None:
    return data.encode("utf-8") if isinstance(data, str) else data
