"""What a partition log reports about itself, as plain dataclasses.

The log knows nothing of brokers or topics; the replica that owns it adds that context when it
turns these into cluster events. Each is JSON-friendly (ints, strings, lists).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class SegmentRolled:
    base_offset: int           # the new active segment
    previous_base_offset: int  # the segment that became inactive
    reason: str                # segment.bytes, segment.ms, offset index full, retention, ...


@dataclass(frozen=True, slots=True)
class SegmentDeleted:
    base_offset: int
    next_offset: int           # first offset after the segment's records
    size_in_bytes: int
    reason: str                # retention.ms, retention.bytes, log start offset, truncation


@dataclass(frozen=True, slots=True)
class LogStartOffsetIncremented:
    log_start_offset: int
    reason: str


@dataclass(frozen=True, slots=True)
class LogTruncated:
    from_offset: int           # log end offset before
    to_offset: int             # log end offset after
    records_removed: int
    bytes_removed: int
    removed: tuple = field(default=())  # (offset, key, value) of what was lost, keys/values as bytes


@dataclass(frozen=True, slots=True)
class LogRecovered:
    recovery_point: int        # validation started at the segment holding this offset
    segments_recovered: int
    bytes_truncated: int       # torn or corrupt tail cut off
    segments_deleted: int      # later segments dropped after a corrupt one
    indexes_rebuilt: int
    log_end_offset: int


@dataclass(frozen=True, slots=True)
class LogFlushed:
    recovery_point: int


# Everything a Log hands its listener.
LogEvent = SegmentRolled | SegmentDeleted | LogStartOffsetIncremented | LogTruncated | LogRecovered | LogFlushed


def event_dict(event: LogEvent) -> dict[str, Any]:
    """The event as a dict with its kind, for JSON."""
    data = asdict(event)
    data["kind"] = type(event).__name__
    return data
