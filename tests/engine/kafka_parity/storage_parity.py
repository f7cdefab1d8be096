"""Builders the storage parity tests share: batches as Kafka's tests build them (TestUtils.records,
MemoryRecords.withRecords), a segment in a temporary directory, a batch with a header field
rewritten and its CRC made right again (a batch that passes the CRC check but lies)."""
from __future__ import annotations

import struct

from engine.storage import record_batch as rb
from engine.storage.crc import crc32c
from engine.storage.log_config import LogConfig
from engine.storage.segment import LogSegment

T0 = 1_700_000_000_000   # the tests' "now", as Kafka's MockTime starts somewhere fixed


def batch(*values: bytes | None, base_offset: int = 0, timestamp: int = T0, key: bytes | None = None,
          timestamps: list[int] | None = None, compression: int = rb.NONE) -> bytes:
    """One v2 batch of `values` (all with `key`), each at `timestamp` or at its own in `timestamps`."""
    stamps = timestamps or [timestamp] * len(values)
    return rb.encode_batch([(key, value, ts) for value, ts in zip(values, stamps)], base_offset=base_offset,
                           base_timestamp=stamps[0], compression=compression)


def keyed_batch(*pairs: tuple[bytes | None, bytes | None], compression: int = rb.NONE) -> bytes:
    return rb.encode_batch([(k, v, T0) for k, v in pairs], base_timestamp=T0, compression=compression)


def headers_of(data: bytes) -> list[rb.BatchHeader]:
    return [header for _, header in rb.iter_batches(data)]


def append(segment: LogSegment, data: bytes) -> None:
    """Append already-offset batches to a segment, as a log does after validation."""
    segment.append(data, headers_of(data))


def new_segment(directory, base_offset: int, *, created_ms: int = T0, **config: object) -> LogSegment:
    """A segment with its own config; keys are LogConfig's fields (index_interval_bytes=...)."""
    return LogSegment.create(str(directory), base_offset, LogConfig(**config), created_ms=created_ms)


def with_header(data: bytes, *, records_count: int | None = None, last_offset_delta: int | None = None) -> bytes:
    """The batch with recordsCount / lastOffsetDelta rewritten and the CRC-32C recomputed."""
    out = bytearray(data)
    if records_count is not None:
        struct.pack_into(">i", out, rb.RECORDS_COUNT_OFFSET, records_count)
    if last_offset_delta is not None:
        struct.pack_into(">i", out, rb.LAST_OFFSET_DELTA_OFFSET, last_offset_delta)
    rb.CRC_STRUCT.pack_into(out, rb.CRC_OFFSET, crc32c(bytes(out[rb.ATTRIBUTES_OFFSET:])))
    return bytes(out)
