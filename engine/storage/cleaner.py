"""The log cleaner: compaction of `cleanup.policy=compact` (and `compact,delete`) logs, as Kafka 4's
LogCleaner, LogCleanerManager, Cleaner and LogToClean do it (core/.../log/LogCleaner.scala and
LogCleanerManager.scala; storage/.../log/Cleaner.java, LogToClean.java from Kafka 4.1 on).

A log's segments split at two offsets:

    [ clean section ][ dirty section (cleanable) ][ uncleanable ............ active segment ]
    log start        first dirty offset           first uncleanable offset

- the *first dirty offset* is the broker's cleaner checkpoint for the partition
  (`cleaner-offset-checkpoint` in the data dir: the offset the last cleaning reached), or the log
  start when there is none or it no longer lies inside the log (LogCleanerManager.cleanableOffsets);
- the *first uncleanable offset* is the lowest of the high watermark (Kafka: the last stable
  offset; the engine has no transactions), the active segment's base (the active segment is never
  cleaned) and the base of the first dirty segment whose largest timestamp is younger than
  `min.compaction.lag.ms`; then rounded down to a segment base (calculateCleanableBytes);
- the dirty ratio is cleanable bytes / (clean + cleanable bytes) (LogToClean.cleanableRatio).

Choosing (grabFilthiestCompactedLog): among compacted logs with bytes, those whose ratio is above
`min.cleanable.dirty.ratio`, or that must be compacted now (a dirty inactive segment's first batch
is older than `max.compaction.lag.ms`, maxCompactionDelay) and have cleanable bytes; the one with
the highest ratio is cleaned (the first in partition order on a tie: Kafka's pool has no order).

Cleaning one log (Cleaner.doClean):
1. the offset map: key -> last offset, over the dirty section (buildOffsetMap); its latest offset
   is the end of the dirty section, the first offset the next cleaning starts from;
2. every segment from the log start to that end, in groups whose log bytes fit `segment.bytes`
   and whose index bytes fit `segment.index.bytes` (groupSegmentsBySize), is rewritten into one
   `.cleaned` segment and swapped in (Log.replace_segments: `.cleaned` -> `.swap` -> live name,
   old files renamed `.deleted` and removed; a crash at any step is finished or undone on load);
3. record by record (Cleaner.shouldRetainRecord): a record past the map's latest offset is kept;
   a keyed record is kept only if no later offset holds its key, and a tombstone (null value)
   only while its batch's delete horizon has not passed; a record without a key is dropped;
4. batch by batch (MemoryRecords.filterTo and the cleaner's checkBatchRetention): a batch whose
   records all stay is copied byte for byte; otherwise its retained records are written again as
   one batch with the same base offset, last offset delta, producer fields, epoch and codec —
   offsets never change, so a compacted log has gaps. A batch left with no record goes, unless
   it is the last batch of its producer (its sequence must survive for the idempotent producer)
   or ends exactly at the cleaning's upper bound (the offset information must survive): those
   stay as an empty batch header (DefaultRecordBatch.writeEmptyHeader);
5. the new segment's offset and time indexes are built as its batches are appended, one append
   per 256 KiB read of the source (the cleaner's read buffer), so cleaned indexes are sparse.

Tombstones (KIP-534, Kafka 3.1+; this is what Kafka 4 does): a cleaning that keeps a tombstone in
a batch with no delete horizon yet writes that batch again with the delete-horizon attribute bit
(0x40) set and baseTimestamp = now + `delete.retention.ms` (record timestamps stay as they were,
their deltas now counted from that horizon). Later cleanings drop the batch's tombstones once
now >= that horizon. So a tombstone lives at least `delete.retention.ms` after the first cleaning
that saw it — not after it was written (the pre-3.1 rule used the segment's last-modified time).
A tombstone goes only when a later cleaning runs, which needs the log to be dirty again.

Where the engine differs from Kafka, deliberately:
- the offset map is a dict of whole keys (Kafka: a fixed SkimpyOffsetMap of MD5 hashes bounded by
  `log.cleaner.dedupe.buffer.size`, which can end a cleaning early); lab logs never fill it;
- every producer id seen in the log counts as active (Kafka forgets producers after
  `producer.id.expiration.ms`), and there are no transactions, so no marker is ever removed;
- old segments are removed at once after the swap, not after `file.delete.delay.ms`;
- `cleaner-offset-checkpoint` is written the first time something is cleaned (Kafka creates the
  empty file when the broker starts), so clusters that never clean keep the files they had;
- a `compact,delete` log's retention runs on the broker's retention timer, as for `delete` logs
  (Kafka 4 runs it on the cleaner thread after a cleaning); the rules it applies are the same.
"""
from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from engine.storage import checkpoints
from engine.storage import record_batch as rb
from engine.storage.compression import compress
from engine.storage.crc import crc32c
from engine.storage.log import Log
from engine.storage.segment import INT32_MAX, LogSegment

CLEANER_CHECKPOINT = "cleaner-offset-checkpoint"
IO_BUFFER_BYTES = 512 * 1024 // 2   # log.cleaner.io.buffer.size (512 KiB) halved: the read buffer
MAX_CLEANINGS_PER_RUN = 1000        # a run cleans until nothing is cleanable; this only bounds a bug
# What a cleaning read is remembered for the lab's before/after view (the last cleaning of each log,
# LogCleanerManager.last_cleaning): at most this many records, each key and value cut to this many
# bytes. Kafka keeps nothing of it; it is engine state only, never in an event.
READ_RECORDS_MAX = 200
READ_BYTES_MAX = 128

Key = tuple[str, int]   # (topic, partition)


@dataclass(frozen=True, slots=True)
class OffsetsToClean:
    """LogCleanerManager.OffsetsToClean: where the dirty section starts and ends."""
    first_dirty_offset: int
    first_uncleanable_dirty_offset: int
    force_update_checkpoint: bool = False


@dataclass(frozen=True, slots=True)
class LogToClean:
    """A compacted log and the sizes of its sections (LogToClean)."""
    key: Key
    log: Log
    first_dirty_offset: int
    first_uncleanable_offset: int       # a segment base (calculateCleanableBytes)
    clean_bytes: int
    cleanable_bytes: int
    needs_compaction_now: bool = False  # max.compaction.lag.ms passed for a dirty segment

    @property
    def total_bytes(self) -> int:
        return self.clean_bytes + self.cleanable_bytes

    @property
    def cleanable_ratio(self) -> float:
        return self.cleanable_bytes / self.total_bytes if self.total_bytes else 0.0


@dataclass(frozen=True, slots=True)
class RecordRead:
    """One record as the cleaner read it, and whether it kept it (Cleaner.shouldRetainRecord).
    `key`/`value` are cut to READ_BYTES_MAX bytes (`cut` says so); a None value is a tombstone."""
    offset: int
    key: bytes | None
    value: bytes | None
    retained: bool
    cut: bool = False


@dataclass(frozen=True, slots=True)
class BatchRead:
    """One batch as the cleaner read it and what became of it: "copied" (byte for byte), "rewritten"
    (fewer records, or a delete horizon set), "emptied" (only its header kept) or "removed"."""
    segment_base_offset: int
    base_offset: int
    last_offset: int
    is_control: bool
    outcome: str
    records: tuple[RecordRead, ...]     # all of them, unless READ_RECORDS_MAX was reached


@dataclass(slots=True)
class CleanerStats:
    """What one cleaning did (CleanerStats, plus the counts the lab shows)."""
    segments_before: int = 0
    segments_after: int = 0
    records_before: int = 0
    records_after: int = 0
    bytes_before: int = 0
    bytes_after: int = 0
    tombstones_removed: int = 0
    delete_horizons_set: int = 0      # batches given a delete horizon (KIP-534) by this cleaning
    empty_batches_kept: int = 0
    segments_read: list[tuple[int, int]] = field(default_factory=list)   # (base offset, size) of each rewritten
    batches_read: list[BatchRead] = field(default_factory=list)   # the first READ_RECORDS_MAX records' batches
    records_read: int = 0                                          # records in batches_read


@dataclass(frozen=True, slots=True)
class CleaningResult:
    """One log cleaned: which, from where to where, with which ratio, and what it did."""
    key: Key
    first_dirty_offset: int
    end_offset: int                   # the first offset not cleaned: the new checkpoint
    dirty_ratio: float
    forced_by_max_lag: bool
    stats: CleanerStats
    segments: tuple[tuple[int, int], ...] = field(default=())   # (base offset, size) after cleaning
    cleaned_ms: int = 0               # when (the cleaner's clock)


# -- choosing a log ---------------------------------------------------------------------------------
def log_segments(log: Log, start: int, end: int) -> list[LogSegment]:
    """The segments holding offsets in [start, end): the one at or below `start`, then every one
    whose base is below `end` (LocalLog.segments(from, to))."""
    if start >= end:
        return []
    segments = log.segments
    first = 0
    for i, segment in enumerate(segments):
        if segment.base_offset <= start:
            first = i
    return [s for s in segments[first:] if s.base_offset < end]


def non_active_segments_from(log: Log, offset: int) -> list[LogSegment]:
    """The inactive segments from the one holding `offset` on (UnifiedLog.nonActiveLogSegmentsFrom)."""
    return [s for s in log_segments(log, offset, log.active_segment.base_offset) if s is not log.active_segment]


def cleanable_offsets(log: Log, last_clean_offset: int | None, now_ms: int) -> OffsetsToClean:
    """LogCleanerManager.cleanableOffsets: the dirty section of `log` at `now_ms`."""
    log_start = log.log_start_offset
    checkpoint = log_start if last_clean_offset is None else last_clean_offset
    force = checkpoint < log_start or checkpoint > log.log_end_offset
    first_dirty = log_start if force else checkpoint
    bounds = [log.high_watermark, log.active_segment.base_offset]
    lag = max(log.config.min_compaction_lag_ms, 0)
    if lag > 0:
        for segment in non_active_segments_from(log, first_dirty):
            if segment.largest_timestamp() > now_ms - lag:
                bounds.append(segment.base_offset)
                break
    return OffsetsToClean(first_dirty, max(first_dirty, min(bounds)), force)


def calculate_cleanable_bytes(log: Log, first_dirty: int, uncleanable: int) -> tuple[int, int]:
    """(the first uncleanable segment's base, the bytes of the segments before it from the first
    dirty one) — LogCleanerManager.calculateCleanableBytes."""
    rest = non_active_segments_from(log, uncleanable)
    first_uncleanable = (rest[0] if rest else log.active_segment).base_offset
    cleanable = sum(s.size for s in log_segments(log, min(first_dirty, first_uncleanable), first_uncleanable))
    return first_uncleanable, cleanable


def max_compaction_delay(log: Log, first_dirty: int, now_ms: int) -> int:
    """How far past `max.compaction.lag.ms` the oldest dirty inactive segment is (0: not past)."""
    stamps = [t for t in (_first_batch_timestamp(s) for s in non_active_segments_from(log, first_dirty)) if t > 0]
    if not stamps:
        return 0
    clean_until = now_ms - max(log.config.max_compaction_lag_ms, 0)
    return clean_until - min(stamps) if min(stamps) < clean_until else 0


def log_to_clean(key: Key, log: Log, last_clean_offset: int | None, now_ms: int) -> tuple[LogToClean, OffsetsToClean]:
    offsets = cleanable_offsets(log, last_clean_offset, now_ms)
    first_dirty = offsets.first_dirty_offset
    first_uncleanable, cleanable = calculate_cleanable_bytes(log, first_dirty, offsets.first_uncleanable_dirty_offset)
    clean = sum(s.size for s in log.segments if s.base_offset < first_dirty)
    needs_now = max_compaction_delay(log, first_dirty, now_ms) > 0
    return LogToClean(key, log, first_dirty, first_uncleanable, clean, cleanable, needs_now), offsets


def grab_filthiest_compacted_log(logs: Mapping[Key, Log], checkpoint: Mapping[Key, int],
                                 now_ms: int) -> tuple[LogToClean | None, dict[Key, int]]:
    """The compacted log to clean next, if any (LogCleanerManager.grabFilthiestCompactedLog), and the
    checkpoint entries that were invalid and must be reset to the log start."""
    candidates, resets = [], {}
    for key in sorted(logs):
        log = logs[key]
        if not log.config.compact:
            continue
        ltc, offsets = log_to_clean(key, log, checkpoint.get(key), now_ms)
        if offsets.force_update_checkpoint:
            resets[key] = offsets.first_dirty_offset
        if ltc.total_bytes > 0:
            candidates.append(ltc)
    cleanable = [c for c in candidates
                 if (c.needs_compaction_now and c.cleanable_bytes > 0)
                 or c.cleanable_ratio > c.log.config.min_cleanable_dirty_ratio]
    best = None
    for ltc in cleanable:
        if best is None or ltc.cleanable_ratio > best.cleanable_ratio:
            best = ltc
    return best, resets


# -- cleaning a log -----------------------------------------------------------------------------------
def build_offset_map(log: Log, start: int, end: int) -> tuple[dict[bytes, int], int]:
    """key -> its last offset in [start, end), and the map's latest offset (Cleaner.buildOffsetMap:
    every batch reaching `start` moves it; each segment's end moves it to the next segment's base - 1)."""
    offset_map: dict[bytes, int] = {}
    latest = -1
    dirty = log_segments(log, start, end)
    ends = [s.base_offset for s in dirty[1:]] + [end]
    for segment, next_start in zip(dirty, ends):
        data = segment.read_bytes()
        for header, records in _batches(data):
            if header.is_control:
                continue
            for record in records:
                if record.key is not None and record.offset >= start:
                    offset_map[record.key] = record.offset
            if header.last_offset >= start:
                latest = header.last_offset
        latest = next_start - 1
    return offset_map, latest


def group_segments_by_size(segments: list[LogSegment], max_size: int, max_index_size: int,
                           first_uncleanable_offset: int) -> list[list[LogSegment]]:
    """Consecutive segments in groups whose log bytes stay within `max_size` and whose index bytes
    stay within `max_index_size`, with offsets a 32-bit relative offset can reach (groupSegmentsBySize)."""
    groups: list[list[LogSegment]] = []
    rest = list(segments)
    while rest:
        group = [rest.pop(0)]
        log_size = group[0].size
        index_size = group[0].offset_index.size_in_bytes()
        time_index_size = group[0].time_index.size_in_bytes()
        while rest:
            nxt = rest[0]
            last_offset = rest[1].base_offset - 1 if len(rest) > 1 else first_uncleanable_offset - 1
            if not (log_size + nxt.size <= max_size
                    and index_size + nxt.offset_index.size_in_bytes() <= max_index_size
                    and time_index_size + nxt.time_index.size_in_bytes() <= max_index_size
                    and (nxt.size == 0 or last_offset - group[-1].base_offset <= INT32_MAX)):
                break
            group.append(rest.pop(0))
            log_size += nxt.size
            index_size += nxt.offset_index.size_in_bytes()
            time_index_size += nxt.time_index.size_in_bytes()
        groups.append(group)
    return groups


def clean(ltc: LogToClean, now_ms: int, *, crash_at: str | None = None) -> CleaningResult:
    """Clean one log (Cleaner.doClean); returns where the next cleaning starts and what this one did.
    `crash_at` stops the first group's swap midway (Log.replace_segments), for the recovery tests."""
    log = ltc.log
    offset_map, latest = build_offset_map(log, ltc.first_dirty_offset, ltc.first_uncleanable_offset)
    end_offset = latest + 1
    stats = CleanerStats()
    last_of_producer = _last_batch_of_each_producer(log)
    segments = log_segments(log, 0, end_offset)
    stats.segments_before = len(segments)
    for group in group_segments_by_size(segments, log.config.segment_bytes, log.config.segment_index_bytes,
                                        ltc.first_uncleanable_offset):
        cleaned = _clean_segments(log, group, offset_map, latest, now_ms, stats, last_of_producer,
                                  ltc.first_uncleanable_offset)
        log.replace_segments(cleaned, group, crash_at=crash_at)
        if crash_at is not None:
            break
        stats.segments_after += 1
        stats.bytes_after += cleaned.size
    after = tuple((s.base_offset, s.size) for s in log.segments if s.base_offset < end_offset) \
        if crash_at is None else ()
    return CleaningResult(ltc.key, ltc.first_dirty_offset, end_offset, ltc.cleanable_ratio,
                          ltc.needs_compaction_now and ltc.cleanable_ratio <= log.config.min_cleanable_dirty_ratio,
                          stats, after, now_ms)


def _clean_segments(log: Log, group: list[LogSegment], offset_map: dict[bytes, int], latest: int, now_ms: int,
                    stats: CleanerStats, last_of_producer: dict[int, int], upper_bound: int) -> LogSegment:
    """Write one group's retained batches into a new `.cleaned` segment (Cleaner.cleanSegments/cleanInto)."""
    cleaned = log.create_cleaned_segment(group[0].base_offset, max(s.created_ms for s in group))
    retention_ms = log.config.delete_retention_ms
    for segment in group:
        stats.bytes_before += segment.size
        stats.segments_read.append((segment.base_offset, segment.size))
        data = segment.read_bytes()
        chunk: list[bytes] = []
        chunk_headers: list[rb.BatchHeader] = []
        read_start = 0
        for position, header, records in _batches_at(data):
            if position + header.size_in_bytes - read_start > IO_BUFFER_BYTES and chunk:
                cleaned.append(b"".join(chunk), chunk_headers)   # one append per buffer read, as cleanInto
                chunk, chunk_headers, read_start = [], [], position
            out, kept = _filter_batch(data, position, header, records, offset_map, latest, now_ms, retention_ms,
                                      last_of_producer, upper_bound, stats)
            _remember_batch(stats, segment.base_offset, header, records, kept,
                            _outcome(out, kept, records, data[position:position + header.size_in_bytes]))
            if out is not None:
                chunk.append(out)
                chunk_headers.append(rb.read_batch_header(out))
        if chunk:
            cleaned.append(b"".join(chunk), chunk_headers)
    cleaned.on_become_inactive()
    return cleaned


def _filter_batch(data: bytes, position: int, header: rb.BatchHeader, records: list[rb.Record],
                  offset_map: dict[bytes, int], latest: int, now_ms: int, retention_ms: int,
                  last_of_producer: dict[int, int], upper_bound: int,
                  stats: CleanerStats) -> tuple[bytes | None, list[rb.Record]]:
    """The batch as the cleaner writes it back — whole, rebuilt with fewer records, an empty header,
    or None (dropped) — and the records it keeps. MemoryRecords.filterTo with the cleaner's RecordFilter."""
    stats.records_before += len(records)
    horizon = header.base_timestamp if header.attributes & rb.DELETE_HORIZON_FLAG_MASK else None
    kept = records     # no transactions in the engine: a control batch is never discarded
    if not header.is_control:
        kept = []
        for record in records:
            if _retain(record, offset_map, latest, horizon, now_ms):
                kept.append(record)
            elif record.value is None:
                stats.tombstones_removed += 1
    stats.records_after += len(kept)
    if kept:
        needs_horizon = horizon is None and any(r.value is None for r in kept)
        if len(kept) == len(records) and not needs_horizon:
            return data[position:position + header.size_in_bytes], kept
        if needs_horizon:
            stats.delete_horizons_set += 1
            horizon = now_ms + retention_ms
        return retained_batch(header, kept, horizon), kept
    last_of_its_producer = header.producer_id >= 0 and last_of_producer.get(header.producer_id) == header.last_offset
    if last_of_its_producer or header.next_offset == upper_bound:
        stats.empty_batches_kept += 1
        return empty_batch(header), kept
    return None, kept


def _outcome(out: bytes | None, kept: list[rb.Record], records: list[rb.Record], original: bytes) -> str:
    if out is None:
        return "removed"
    if not kept and records:
        return "emptied"
    return "copied" if out == original else "rewritten"


def _remember_batch(stats: CleanerStats, segment_base_offset: int, header: rb.BatchHeader,
                    records: list[rb.Record], kept: list[rb.Record], outcome: str) -> None:
    """Keep what the cleaner read of this batch for the lab, within READ_RECORDS_MAX records."""
    room = READ_RECORDS_MAX - stats.records_read
    if room <= 0:
        return
    retained = {r.offset for r in kept}
    shown = tuple(RecordRead(r.offset, _cut(r.key), _cut(r.value), r.offset in retained,
                             _longer(r.key) or _longer(r.value)) for r in records[:room])
    stats.batches_read.append(BatchRead(segment_base_offset, header.base_offset, header.last_offset,
                                        header.is_control, outcome, shown))
    stats.records_read += len(shown)


def _cut(data: bytes | None) -> bytes | None:
    return None if data is None else data[:READ_BYTES_MAX]


def _longer(data: bytes | None) -> bool:
    return data is not None and len(data) > READ_BYTES_MAX


def _retain(record: rb.Record, offset_map: dict[bytes, int], latest: int, horizon: int | None, now_ms: int) -> bool:
    """Cleaner.shouldRetainRecord for a v2 batch."""
    if record.offset > latest:
        return True
    if record.key is None:
        return False     # a compacted log's record needs a key (Kafka counts it invalid and drops it)
    if record.offset < offset_map.get(record.key, -1):
        return False
    return record.value is not None or horizon is None or now_ms < horizon


def retained_batch(header: rb.BatchHeader, records: list[rb.Record], delete_horizon_ms: int | None) -> bytes:
    """The batch's retained records as one batch (MemoryRecords.buildRetainedRecordsInto): same base
    offset, last offset delta (overrideLastOffset), producer fields, epoch, codec (at its default
    level) and timestamp type; with a delete horizon its baseTimestamp is the horizon and bit 0x40 is set."""
    base_timestamp = records[0].timestamp if delete_horizon_ms is None else delete_horizon_ms
    body = b"".join(rb._encode_record(r.offset - header.base_offset, r.timestamp - base_timestamp,
                                      r.key, r.value, r.headers) for r in records)
    if header.compression != rb.NONE:
        body = compress(header.compression, body)
    attributes = header.attributes & ~rb.DELETE_HORIZON_FLAG_MASK
    if delete_horizon_ms is not None:
        attributes |= rb.DELETE_HORIZON_FLAG_MASK
    max_timestamp = header.max_timestamp if header.timestamp_type == rb.LOG_APPEND_TIME \
        else max(r.timestamp for r in records)
    return _with_crc(rb.HEADER_STRUCT.pack(
        header.base_offset, rb.MIN_BATCH_LENGTH + len(body), header.partition_leader_epoch, rb.MAGIC, 0,
        attributes, header.last_offset_delta, base_timestamp, max_timestamp, header.producer_id,
        header.producer_epoch, header.base_sequence, len(records)), body)


def empty_batch(header: rb.BatchHeader) -> bytes:
    """A batch header with no records, keeping the offsets and producer fields
    (DefaultRecordBatch.writeEmptyHeader: no codec, no base timestamp, the old max timestamp)."""
    keep = rb.TIMESTAMP_TYPE_MASK | rb.TRANSACTIONAL_FLAG_MASK | rb.CONTROL_FLAG_MASK
    return _with_crc(rb.HEADER_STRUCT.pack(
        header.base_offset, rb.MIN_BATCH_LENGTH, header.partition_leader_epoch, rb.MAGIC, 0,
        header.attributes & keep, header.last_offset_delta, rb.NO_TIMESTAMP, header.max_timestamp,
        header.producer_id, header.producer_epoch, header.base_sequence, 0), b"")


def _with_crc(head: bytes, body: bytes) -> bytes:
    crc = crc32c(body, crc32c(head[rb.ATTRIBUTES_OFFSET:]))
    return b"".join((head[:rb.CRC_OFFSET], rb.CRC_STRUCT.pack(crc), head[rb.ATTRIBUTES_OFFSET:], body))


def _batches(data: bytes) -> Iterable[tuple[rb.BatchHeader, list[rb.Record]]]:
    for _position, header, records in _batches_at(data):
        yield header, records


def _batches_at(data: bytes) -> Iterable[tuple[int, rb.BatchHeader, list[rb.Record]]]:
    position = 0
    while position + rb.RECORD_BATCH_OVERHEAD <= len(data):
        header, records = rb.decode_batch(data, position, verify_crc=False)
        yield position, header, records
        position += header.size_in_bytes


def _last_batch_of_each_producer(log: Log) -> dict[int, int]:
    """producer id -> the last offset of its last batch in the log (lastRecordsOfActiveProducers)."""
    out: dict[int, int] = {}
    for segment in log.segments:
        for header, _records in _batches(segment.read_bytes()):
            if header.producer_id >= 0 and not header.is_control:
                out[header.producer_id] = header.last_offset
    return out


def _first_batch_timestamp(segment: LogSegment) -> int:
    """The first batch's max timestamp (LogSegment.getFirstBatchTimestamp); -1 if the segment is empty."""
    head = segment.read_bytes(0, rb.RECORD_BATCH_OVERHEAD)
    return rb.read_batch_header(head).max_timestamp if len(head) == rb.RECORD_BATCH_OVERHEAD else rb.NO_TIMESTAMP


# -- the broker's cleaner: choose, clean, checkpoint -------------------------------------------------
class LogCleanerManager:
    """One broker data dir's cleaner state (LogCleanerManager): the `cleaner-offset-checkpoint`
    file, read when the broker starts and rewritten whenever a cleaning ends (doneCleaning) or a
    checkpointed offset was found outside its log. It keeps no path: the data dir is passed to each
    call (an engine checkpoint restores a cluster into another directory).

    `last_cleaning` holds the last cleaning of each log since this broker started, with what it read
    (CleanerStats.batches_read), for the lab's before/after view; Kafka keeps no such thing."""

    def __init__(self, data_dir: str, *, fsync: bool = True) -> None:
        self._fsync = fsync
        self.checkpoint: dict[Key, int] = checkpoints.read_offsets(os.path.join(data_dir, CLEANER_CHECKPOINT))
        self.last_cleaning: dict[Key, CleaningResult] = {}

    def clean_filthiest(self, data_dir: str, logs: Mapping[Key, Log], now_ms: int, *,
                        crash_at: str | None = None) -> CleaningResult | None:
        """Clean the filthiest compacted log, if one is cleanable (CleanerThread.cleanFilthiestLog)."""
        ltc, resets = grab_filthiest_compacted_log(logs, self.checkpoint, now_ms)
        if resets:
            self.checkpoint.update(resets)
            self._write(data_dir, logs)
        if ltc is None:
            return None
        result = clean(ltc, now_ms, crash_at=crash_at)
        if crash_at is None:
            self.checkpoint[ltc.key] = result.end_offset
            self.last_cleaning[ltc.key] = result
            self._write(data_dir, logs)
        return result

    def forget(self, key: Key) -> None:
        """The log of `key` was deleted: its last cleaning is no one's any more."""
        self.last_cleaning.pop(key, None)

    def clean_all(self, data_dir: str, logs: Mapping[Key, Log], now_ms: int) -> list[CleaningResult]:
        """Clean until nothing is cleanable: the cleaner thread backs off only when a run found nothing."""
        done = []
        for _ in range(MAX_CLEANINGS_PER_RUN):
            result = self.clean_filthiest(data_dir, logs, now_ms)
            if result is None:
                break
            done.append(result)
        return done

    def _write(self, data_dir: str, logs: Mapping[Key, Log]) -> None:
        # Kafka keeps only the partitions the broker still has (updateCheckpoints).
        self.checkpoint = {k: v for k, v in self.checkpoint.items() if k in logs}
        checkpoints.write_offsets(os.path.join(data_dir, CLEANER_CHECKPOINT), self.checkpoint, fsync=self._fsync)


def has_cleanable_candidate(logs: Iterable[Log]) -> bool:
    """True once some compacted log has a segment besides its active one: before that, the cleaner
    thread's every wake-up finds nothing to do (the broker arms its timer from then on)."""
    return any(log.config.compact and len(log.segments) > 1 for log in logs)
