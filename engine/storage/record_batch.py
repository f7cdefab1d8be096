"""Kafka's record batch, format v2 (magic = 2, since 0.11 / KIP-98): encode, decode, walk, patch.

This module owns the byte layout of every batch the engine writes to a segment, sends in a
Produce request or copies to a follower. Its output is byte-for-byte what a Kafka broker writes.

    RecordBatch =>
      baseOffset           int64    offset of the first record; the leader assigns it on append
      batchLength          int32    bytes after this field (batch size = LOG_OVERHEAD + batchLength)
      partitionLeaderEpoch int32    stamped by the leader; -1 when none
      magic                int8     2
      crc                  uint32   CRC-32C of the bytes from attributes to the end of the batch
      attributes           int16    bits 0-2 compression, 3 timestampType, 4 isTransactional,
                                    5 isControl, 6 hasDeleteHorizon, 7-15 unused
      lastOffsetDelta      int32    offset delta of the last record (also lastSequenceDelta)
      baseTimestamp        int64    timestamp of the first record
      maxTimestamp         int64    largest record timestamp (the append time for LogAppendTime)
      producerId           int64    -1 when none
      producerEpoch        int16    -1 when none
      baseSequence         int32    -1 when none
      recordsCount         int32
      records              [Record] compressed as one blob when the codec is not none

    Record =>
      length               varint   bytes after this field
      attributes           int8     unused, 0
      timestampDelta       varlong  timestamp - baseTimestamp
      offsetDelta          varint   offset - baseOffset
      keyLength            varint   -1 for a null key
      key                  bytes
      valueLength          varint   -1 for a null value (a tombstone)
      value                bytes
      headersCount         varint
      Headers => headerKeyLength varint, headerKey UTF-8 (never null),
                 headerValueLength varint (-1 for null), headerValue bytes

Invariants kept here:
- The CRC covers attributes..end, so baseOffset and partitionLeaderEpoch can be rewritten in
  place (`set_base_offset_in_place`, `with_partition_leader_epoch`) without touching the CRC or
  the records: this is how a broker appends a batch a producer encoded.
- An encoded batch numbers its records 0..n-1 (offset deltas); absolute offsets exist only after
  the leader stamps baseOffset.
- No wall clock: every timestamp comes from the caller.

Speed: `_encode_records` and `_decode_records` are the hot loops. They inline the common one- and
two-byte varints through the lookup tables of `varint.py`, alias globals to locals and build the
batch with one `b"".join`; anything unusual falls back to the plain, general helpers. When the C
extension is built, `encode_batch` has it encode the common record forms (engine/storage/_columnar.c,
same bytes, ~10x faster), and the engine's bulk readers decode through it
(engine/storage/batch_records.py); these Python loops stay the reference and the fallback.
"""
from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from engine.common.errors import Errors, KafkaError
from engine.storage import compression as codecs
from engine.storage.crc import crc32c
from engine.storage.varint import (
    ENCODED_SMALL_VARINTS,
    SMALL_VARINT_SIZES,
    SMALL_ZIGZAG_VALUES,
    decode_varint,
    decode_varlong,
    encode_varint,
    encode_varlong,
    size_of_varint,
    size_of_varlong,
)

try:
    from engine.storage._columnar import encode_records as _fast_encode
except ImportError:  # built by `pip install -e .`; without it, _encode_records does it all
    _fast_encode = None

BytesLike = bytes | bytearray | memoryview

MAGIC = 2

HEADER_STRUCT = struct.Struct(
    ">"
    "q"  # baseOffset
    "i"  # batchLength
    "i"  # partitionLeaderEpoch
    "b"  # magic
    "I"  # crc
    "h"  # attributes
    "i"  # lastOffsetDelta
    "q"  # baseTimestamp
    "q"  # maxTimestamp
    "q"  # producerId
    "h"  # producerEpoch
    "i"  # baseSequence
    "i"  # recordsCount
)
BASE_OFFSET_STRUCT = struct.Struct(">q")
PARTITION_LEADER_EPOCH_STRUCT = struct.Struct(">i")
CRC_STRUCT = struct.Struct(">I")

# Byte offsets of the header fields, derived from the field formats above.
BASE_OFFSET_OFFSET = 0
BATCH_LENGTH_OFFSET = struct.calcsize(">q")
PARTITION_LEADER_EPOCH_OFFSET = struct.calcsize(">qi")
MAGIC_OFFSET = struct.calcsize(">qii")
CRC_OFFSET = struct.calcsize(">qiib")
ATTRIBUTES_OFFSET = struct.calcsize(">qiibI")
LAST_OFFSET_DELTA_OFFSET = struct.calcsize(">qiibIh")
BASE_TIMESTAMP_OFFSET = struct.calcsize(">qiibIhi")
MAX_TIMESTAMP_OFFSET = struct.calcsize(">qiibIhiq")
PRODUCER_ID_OFFSET = struct.calcsize(">qiibIhiqq")
PRODUCER_EPOCH_OFFSET = struct.calcsize(">qiibIhiqqq")
BASE_SEQUENCE_OFFSET = struct.calcsize(">qiibIhiqqqh")
RECORDS_COUNT_OFFSET = struct.calcsize(">qiibIhiqqqhi")
RECORDS_OFFSET = HEADER_STRUCT.size

LOG_OVERHEAD = BATCH_LENGTH_OFFSET + struct.calcsize(">i")   # baseOffset + batchLength = 12
RECORD_BATCH_OVERHEAD = HEADER_STRUCT.size                   # 61
MIN_BATCH_LENGTH = RECORD_BATCH_OVERHEAD - LOG_OVERHEAD      # 49: a header and no records

# Sentinels ("none") of the header and record fields.
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1
NO_TIMESTAMP = -1
NULL_LENGTH = -1

# Attribute bits.
COMPRESSION_CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_FLAG_MASK = 0x10
CONTROL_FLAG_MASK = 0x20
DELETE_HORIZON_FLAG_MASK = 0x40

# Compression codec ids (attributes bits 0-2); the codecs themselves live in compression.py.
NONE = codecs.NONE
GZIP = codecs.GZIP
SNAPPY = codecs.SNAPPY
LZ4 = codecs.LZ4
ZSTD = codecs.ZSTD
COMPRESSION_NAMES = codecs.CODEC_NAMES

# Timestamp types (attributes bit 3).
CREATE_TIME = 0
LOG_APPEND_TIME = 1

RECORD_ATTRIBUTES = b"\x00"   # a record's attributes byte: no bits are defined
NULL_LENGTH_BYTES = encode_varint(NULL_LENGTH)
NO_HEADERS_BYTES = encode_varint(0)

# In-loop forms of the varint rules (see varint.py): a byte below CONTINUATION_BIT ends a varint.
CONTINUATION_BIT = 0x80
PAYLOAD_MASK = 0x7F
PAYLOAD_BITS = 7


class CorruptRecordError(KafkaError):
    """A batch or record is ill-formed: bad CRC or magic, truncated, or lengths that disagree
    (Kafka's CorruptRecordException, CORRUPT_MESSAGE on the wire).

    `position` is the byte position (in the caller's buffer) of the batch concerned, when known.
    """
    error = Errors.CORRUPT_MESSAGE

    def __init__(self, message: str, position: int | None = None) -> None:
        super().__init__(message)
        self.position = position


class UnsupportedCompressionError(CorruptRecordError):
    """The batch uses a codec this engine cannot decompress (its Python package is missing:
    python-snappy, lz4 and zstandard are runtime dependencies, so only a broken install does this)."""
    error = Errors.UNSUPPORTED_COMPRESSION_TYPE


@dataclass(frozen=True, slots=True)
class Header:
    """A record header: a UTF-8 key (never null) and a nullable value."""
    key: str
    value: bytes | None


class Record:
    """One record, with its absolute offset and timestamp (milliseconds)."""

    __slots__ = ("offset", "timestamp", "key", "value", "headers")

    def __init__(self, offset: int, timestamp: int, key: bytes | None, value: bytes | None,
                 headers: Iterable[Header | tuple[str, bytes | None]] = ()) -> None:
        self.offset = offset
        self.timestamp = timestamp
        self.key = key
        self.value = value
        self.headers = _as_headers(headers) if headers else ()

    @property
    def is_tombstone(self) -> bool:
        """A null value: under compaction, a delete marker for the key."""
        return self.value is None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Record):
            return NotImplemented
        return (self.offset == other.offset and self.timestamp == other.timestamp
                and self.key == other.key and self.value == other.value
                and self.headers == other.headers)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        return (f"Record(offset={self.offset!r}, timestamp={self.timestamp!r}, key={self.key!r}, "
                f"value={self.value!r}, headers={self.headers!r})")


def _as_headers(headers: Iterable[Header | tuple[str, bytes | None]]) -> tuple[Header, ...]:
    return tuple(h if isinstance(h, Header) else Header(*h) for h in headers)


class BatchHeader(NamedTuple):
    """The 61-byte batch header, decoded by one `HEADER_STRUCT.unpack_from`."""
    base_offset: int
    batch_length: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    base_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    records_count: int

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        return self.base_offset + self.last_offset_delta + 1

    @property
    def size_in_bytes(self) -> int:
        return LOG_OVERHEAD + self.batch_length

    @property
    def compression(self) -> int:
        return self.attributes & COMPRESSION_CODEC_MASK

    @property
    def timestamp_type(self) -> int:
        return LOG_APPEND_TIME if self.attributes & TIMESTAMP_TYPE_MASK else CREATE_TIME

    @property
    def is_transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_FLAG_MASK)

    @property
    def is_control(self) -> bool:
        return bool(self.attributes & CONTROL_FLAG_MASK)


# --- Reading headers and walking a log ---------------------------------------------------------

_unpack_header = HEADER_STRUCT.unpack_from
_new_header = tuple.__new__   # a BatchHeader straight from the unpacked fields (their count is fixed)


def read_batch_header(buf: BytesLike, position: int = 0) -> BatchHeader:
    """Decode the header of the batch at `position`.

    Checks that 61 bytes remain, magic is 2 and batchLength covers a header. Does not check the
    CRC nor that the whole batch is present: compare `size_in_bytes` with what remains.
    """
    available = len(buf) - position
    if available < RECORD_BATCH_OVERHEAD:
        raise CorruptRecordError(
            f"batch at position {position}: {available} bytes remain, fewer than the "
            f"{RECORD_BATCH_OVERHEAD}-byte batch header", position)
    header = _new_header(BatchHeader, _unpack_header(buf, position))
    if header.magic != MAGIC:
        raise CorruptRecordError(
            f"batch at position {position}: magic {header.magic}, expected {MAGIC}", position)
    if header.batch_length < MIN_BATCH_LENGTH:
        raise CorruptRecordError(
            f"batch at position {position}: batchLength {header.batch_length} is below the "
            f"minimum {MIN_BATCH_LENGTH}", position)
    return header


def batch_crc_ok(buf: BytesLike, position: int = 0, header: BatchHeader | None = None) -> bool:
    """True if the stored CRC matches the CRC-32C of attributes..end (False if truncated)."""
    if header is None:
        header = read_batch_header(buf, position)
    end = position + header.size_in_bytes
    if end > len(buf):
        return False
    # A view, not a copy; it is released as the call returns (no `with`: a context per batch on the append path).
    return crc32c(memoryview(buf)[position + ATTRIBUTES_OFFSET:end]) == header.crc


def iter_batches(buf: BytesLike, position: int = 0,
                 end: int | None = None) -> Iterator[tuple[int, BatchHeader]]:
    """Yield (position, header) of each whole batch in buf[position:end], without decoding records.

    Stops cleanly at `end`; raises CorruptRecordError for a partial batch at the tail (log recovery
    catches it and truncates there) or an unreadable header. Does not check CRCs.
    """
    end = len(buf) if end is None else min(end, len(buf))
    while position < end:
        remaining = end - position
        if remaining < RECORD_BATCH_OVERHEAD:
            raise CorruptRecordError(
                f"partial batch at position {position}: {remaining} bytes, fewer than the "
                f"{RECORD_BATCH_OVERHEAD}-byte batch header", position)
        header = read_batch_header(buf, position)
        size = header.size_in_bytes
        if size > remaining:
            raise CorruptRecordError(
                f"partial batch at position {position}: it declares {size} bytes, "
                f"{remaining} remain", position)
        yield position, header
        position += size


# --- Patching the fields outside the CRC ------------------------------------------------------

def _require_header_room(buf: BytesLike, position: int) -> None:
    if len(buf) - position < RECORD_BATCH_OVERHEAD:
        raise CorruptRecordError(
            f"batch at position {position}: fewer than {RECORD_BATCH_OVERHEAD} bytes", position)


def set_base_offset_in_place(buf: bytearray, position: int, base_offset: int) -> None:
    """Overwrite baseOffset of the batch at `position`; records and CRC stay as they are."""
    _require_header_room(buf, position)
    BASE_OFFSET_STRUCT.pack_into(buf, position + BASE_OFFSET_OFFSET, base_offset)


def set_partition_leader_epoch_in_place(buf: bytearray, position: int, epoch: int) -> None:
    """Overwrite partitionLeaderEpoch of the batch at `position`; it is not covered by the CRC."""
    _require_header_room(buf, position)
    PARTITION_LEADER_EPOCH_STRUCT.pack_into(buf, position + PARTITION_LEADER_EPOCH_OFFSET, epoch)


def set_log_append_time_in_place(buf: bytearray, position: int, size: int, now_ms: int) -> None:
    """message.timestamp.type=LogAppendTime: the broker sets the timestamp-type bit and
    maxTimestamp (readers then use it for every record); both are under the CRC, so it is
    recomputed — the one case where the broker touches CRC-covered bytes."""
    attributes_at = position + ATTRIBUTES_OFFSET
    (attributes,) = struct.unpack_from(">h", buf, attributes_at)
    struct.pack_into(">h", buf, attributes_at, attributes | TIMESTAMP_TYPE_MASK)
    struct.pack_into(">q", buf, position + MAX_TIMESTAMP_OFFSET, now_ms)
    crc = crc32c(memoryview(buf)[attributes_at:position + size])
    struct.pack_into(">I", buf, position + CRC_OFFSET, crc)


def with_base_offset(batch: BytesLike, base_offset: int) -> bytes:
    """A copy of `batch` with baseOffset rewritten (the CRC does not cover it)."""
    out = bytearray(batch)
    set_base_offset_in_place(out, 0, base_offset)
    return bytes(out)


def with_partition_leader_epoch(batch: BytesLike, epoch: int) -> bytes:
    """A copy of `batch` with partitionLeaderEpoch rewritten (the CRC does not cover it)."""
    out = bytearray(batch)
    set_partition_leader_epoch_in_place(out, 0, epoch)
    return bytes(out)


# --- Encoding ----------------------------------------------------------------------------------

RecordInput = Any
"""A Record, or a tuple (key, value), (key, value, timestamp) or (key, value, timestamp, headers);
headers are Header objects or (str, bytes | None) pairs; a missing or None timestamp means the
batch's base timestamp."""


def encode_batch(records: Iterable[RecordInput], *, base_offset: int = 0,
                 base_timestamp: int | None = None,
                 partition_leader_epoch: int = NO_PARTITION_LEADER_EPOCH,
                 producer_id: int = NO_PRODUCER_ID, producer_epoch: int = NO_PRODUCER_EPOCH,
                 base_sequence: int = NO_SEQUENCE, is_transactional: bool = False,
                 compression: int = NONE, timestamp_type: int = CREATE_TIME,
                 is_control: bool = False, compression_level: int | None = None) -> bytes:
    """Encode records as one v2 batch; their offset deltas are 0..n-1.

    `base_timestamp` defaults to the first timestamp the records carry; with none anywhere this
    raises ValueError (the engine has no wall clock: callers pass time). Compression: any codec
    of compression.py, at `compression_level` (None: the codec's default, as Kafka's).
    """
    if not isinstance(records, (list, tuple)):
        records = list(records)
    if not records:
        raise ValueError("a record batch needs at least one record")
    if compression not in COMPRESSION_NAMES:
        raise ValueError(f"unsupported compression for encoding: id {compression}")
    if timestamp_type not in (CREATE_TIME, LOG_APPEND_TIME):
        raise ValueError(f"unknown timestamp type {timestamp_type}")
    if is_transactional and producer_id == NO_PRODUCER_ID:
        raise ValueError("a transactional batch needs a producer id")
    if base_timestamp is None:
        base_timestamp = _first_timestamp(records)
    if type(base_timestamp) is not int:
        raise TypeError(f"the base timestamp is an int of milliseconds, not {base_timestamp!r}")

    # The C encoder (engine.storage._columnar) takes the common forms — tuples of bytes or
    # None without headers — and gives the same bytes; anything else it leaves to Python.
    encoded = _fast_encode(records if type(records) is list else list(records), base_timestamp) \
        if _fast_encode is not None else None
    if encoded is not None:
        body, max_timestamp = encoded
    else:
        parts, max_timestamp = _encode_records(records, base_timestamp)
        try:
            body = b"".join(parts)
        except TypeError as error:
            raise TypeError(f"record keys and values must be bytes or None: {error}") from None
    if compression != NONE:
        body = codecs.compress(compression, body, compression_level)

    attributes = compression
    if timestamp_type == LOG_APPEND_TIME:
        attributes |= TIMESTAMP_TYPE_MASK
    if is_transactional:
        attributes |= TRANSACTIONAL_FLAG_MASK
    if is_control:
        attributes |= CONTROL_FLAG_MASK
    try:
        header = HEADER_STRUCT.pack(
            base_offset, MIN_BATCH_LENGTH + len(body), partition_leader_epoch, MAGIC, 0,
            attributes, len(records) - 1, base_timestamp, max_timestamp, producer_id,
            producer_epoch, base_sequence, len(records))
    except struct.error as error:
        raise ValueError(f"a batch header field is out of range: {error}") from None
    crc = crc32c(body, crc32c(header[ATTRIBUTES_OFFSET:]))
    return b"".join((header[:CRC_OFFSET], CRC_STRUCT.pack(crc), header[ATTRIBUTES_OFFSET:], body))


def _record_fields(record: RecordInput,
                   base_timestamp: int) -> tuple[Any, Any, int, Sequence[Any]]:
    """(key, value, timestamp, headers) of any accepted record form."""
    if isinstance(record, Record):
        key, value, timestamp, headers = record.key, record.value, record.timestamp, record.headers
    elif len(record) == 2:
        key, value = record
        return key, value, base_timestamp, ()
    elif len(record) == 3:
        key, value, timestamp = record
        headers = ()
    elif len(record) == 4:
        key, value, timestamp, headers = record
    else:
        raise TypeError(f"a record is a Record or a (key, value[, timestamp[, headers]]) tuple, "
                        f"not {record!r}")
    if timestamp is None:
        timestamp = base_timestamp
    elif type(timestamp) is not int:
        raise TypeError(f"a record timestamp is an int of milliseconds, not {timestamp!r}")
    return key, value, timestamp, headers


def _first_timestamp(records: Sequence[RecordInput]) -> int:
    for record in records:
        if isinstance(record, Record):
            return record.timestamp
        if len(record) >= 3 and record[2] is not None:
            return record[2]
    raise ValueError("no timestamp: pass base_timestamp or give the records timestamps "
                     "(the engine has no wall clock)")


def _encode_records(records: Sequence[RecordInput],
                    base_timestamp: int) -> tuple[list[bytes], int]:
    """The parts of the record array (to join) and the batch's maxTimestamp.

    Fast path: every varint of the record fits the small-varint table; a value outside it raises
    KeyError and the record goes through `_encode_record` instead. Records are normally
    2-tuples (timestamp delta 0) or 3-tuples; other forms go through `_record_fields`.
    """
    varints = ENCODED_SMALL_VARINTS
    null_length = NULL_LENGTH_BYTES
    no_headers = NO_HEADERS_BYTES
    attributes = RECORD_ATTRIBUTES
    empty = b""
    parts: list[bytes] = []
    add = parts.extend
    max_timestamp = NO_TIMESTAMP
    for offset_delta, record in enumerate(records):
        if type(record) is tuple and len(record) == 2:
            key, value = record
            timestamp = base_timestamp
            headers: Sequence[Any] = ()
        elif type(record) is tuple and len(record) == 3 and record[2] is not None:
            key, value, timestamp = record
            headers = ()
        else:
            key, value, timestamp, headers = _record_fields(record, base_timestamp)
        try:
            if timestamp > max_timestamp:
                max_timestamp = timestamp
            if key is None:
                key = empty
                key_length = null_length
            else:
                key_length = varints[len(key)]
            if value is None:
                value = empty
                value_length = null_length
            else:
                value_length = varints[len(value)]
            header_bytes = _encode_headers(headers) if headers else no_headers
            head = (attributes + varints[timestamp - base_timestamp] + varints[offset_delta]
                    + key_length)
            size = len(head) + len(key) + len(value_length) + len(value) + len(header_bytes)
            add((varints[size], head, key, value_length, value, header_bytes))
        except (KeyError, TypeError):
            # A varint outside the table, or an odd type: redo this record the plain way,
            # which also validates types and raises a clear error.
            key, value, timestamp, headers = _record_fields(record, base_timestamp)
            parts.append(_encode_record(offset_delta, timestamp - base_timestamp, key, value,
                                        headers))
            max_timestamp = max(max_timestamp, timestamp)
    return parts, max_timestamp


def _encode_record(offset_delta: int, timestamp_delta: int, key: BytesLike | None,
                   value: BytesLike | None, headers: Sequence[Any]) -> bytes:
    """One record, length prefix included: the plain, general form of the hot loop above."""
    body = b"".join((
        RECORD_ATTRIBUTES,
        encode_varlong(timestamp_delta),
        encode_varint(offset_delta),
        _encode_nullable_bytes(key),
        _encode_nullable_bytes(value),
        _encode_headers(headers) if headers else NO_HEADERS_BYTES,
    ))
    return encode_varint(len(body)) + body


def _encode_nullable_bytes(data: BytesLike | None) -> bytes:
    if data is None:
        return NULL_LENGTH_BYTES
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"record keys, values and header values are bytes or None, not {data!r}")
    return encode_varint(len(data)) + bytes(data)


def _encode_headers(headers: Iterable[Header | tuple[str, bytes | None]]) -> bytes:
    headers = tuple(headers)
    parts = [encode_varint(len(headers))]
    for header in headers:
        key, value = (header.key, header.value) if isinstance(header, Header) else header
        if not isinstance(key, str):
            raise TypeError(f"a header key is a str (never null), not {key!r}")
        key_bytes = key.encode("utf-8")
        parts.append(encode_varint(len(key_bytes)))
        parts.append(key_bytes)
        parts.append(_encode_nullable_bytes(value))
    return b"".join(parts)


def record_size(key: BytesLike | None, value: BytesLike | None,
                headers: Iterable[Header | tuple[str, bytes | None]] = (),
                offset_delta: int = 0, timestamp_delta: int = 0) -> int:
    """Encoded size of one record in a batch, its length varint included."""
    sizes = SMALL_VARINT_SIZES   # the producer sizes every record twice: one- and two-byte varints by table
    try:
        body = (len(RECORD_ATTRIBUTES) + sizes[timestamp_delta] + sizes[offset_delta]
                + (len(NULL_LENGTH_BYTES) if key is None else sizes[len(key)] + len(key))
                + (len(NULL_LENGTH_BYTES) if value is None else sizes[len(value)] + len(value))
                + (len(_encode_headers(headers)) if headers else len(NO_HEADERS_BYTES)))
        return sizes[body] + body
    except KeyError:   # a varint of three bytes or more
        pass
    body = (len(RECORD_ATTRIBUTES) + size_of_varlong(timestamp_delta) + size_of_varint(offset_delta)
            + _nullable_bytes_size(key) + _nullable_bytes_size(value)
            + (len(_encode_headers(headers)) if headers else len(NO_HEADERS_BYTES)))
    return size_of_varint(body) + body


def _nullable_bytes_size(data: BytesLike | None) -> int:
    if data is None:
        return len(NULL_LENGTH_BYTES)
    return size_of_varint(len(data)) + len(data)


# --- Decoding ----------------------------------------------------------------------------------

def decode_batch(buf: BytesLike, position: int = 0, *,
                 verify_crc: bool = True) -> tuple[BatchHeader, list[Record]]:
    """Decode the batch at `position` into its header and records (absolute offsets/timestamps).

    Raises CorruptRecordError on a CRC mismatch, truncation or ill-formed records, and its
    subclass UnsupportedCompressionError for a codec whose package is not installed.
    """
    header = read_batch_header(buf, position)
    end = position + header.size_in_bytes
    if end > len(buf):
        raise CorruptRecordError(
            f"truncated batch at position {position}: it declares {header.size_in_bytes} bytes, "
            f"{len(buf) - position} remain", position)
    with memoryview(buf) as view:
        if verify_crc:
            computed = crc32c(view[position + ATTRIBUTES_OFFSET:end])
            if computed != header.crc:
                raise CorruptRecordError(
                    f"batch at position {position}: CRC mismatch, stored {header.crc:#010x}, "
                    f"computed {computed:#010x}", position)
        data = view[position + RECORDS_OFFSET:end].tobytes()
    if header.compression != NONE:
        data = decompress(header.compression, data, position)
    try:
        records = _decode_records(data, header.records_count, header.base_offset,
                                  header.base_timestamp)
    except (IndexError, ValueError) as error:
        raise CorruptRecordError(
            f"batch at position {position}: records are truncated or ill-formed ({error})",
            position) from None
    except CorruptRecordError as error:
        raise CorruptRecordError(f"batch at position {position}: {error}", position) from None
    if header.timestamp_type == LOG_APPEND_TIME:
        for record in records:
            record.timestamp = header.max_timestamp
    return header, records


def _decode_records(data: bytes, count: int, base_offset: int,
                    base_timestamp: int) -> list[Record]:
    """Decode `count` records filling `data` exactly.

    Each varint is read inline when it takes one or two bytes (a table lookup on the bytes) and
    by `decode_varint`/`decode_varlong` otherwise. Running off the end raises IndexError.
    """
    zigzag = SMALL_ZIGZAG_VALUES
    continuation = CONTINUATION_BIT
    payload = PAYLOAD_MASK
    bits = PAYLOAD_BITS
    new_record = object.__new__   # Record.__init__ would only copy the fields we set below
    record_class = Record
    records: list[Record] = []
    append = records.append
    pos = 0
    for index in range(count):
        b = data[pos]  # length: varint
        if b < continuation:
            length = zigzag[b]
            pos += 1
        elif (b1 := data[pos + 1]) < continuation:
            length = zigzag[(b1 << bits) | (b & payload)]
            pos += 2
        else:
            length, pos = decode_varint(data, pos)
        record_end = pos + length
        b = data[pos + 1]  # attributes: int8, unused (skipped); timestampDelta: varlong
        if b < continuation:
            timestamp_delta = zigzag[b]
            pos += 2
        elif (b1 := data[pos + 2]) < continuation:
            timestamp_delta = zigzag[(b1 << bits) | (b & payload)]
            pos += 3
        else:
            timestamp_delta, pos = decode_varlong(data, pos + 1)
        b = data[pos]  # offsetDelta: varint
        if b < continuation:
            offset_delta = zigzag[b]
            pos += 1
        elif (b1 := data[pos + 1]) < continuation:
            offset_delta = zigzag[(b1 << bits) | (b & payload)]
            pos += 2
        else:
            offset_delta, pos = decode_varint(data, pos)
        b = data[pos]  # keyLength: varint; key
        if b < continuation:
            key_length = zigzag[b]
            pos += 1
        elif (b1 := data[pos + 1]) < continuation:
            key_length = zigzag[(b1 << bits) | (b & payload)]
            pos += 2
        else:
            key_length, pos = decode_varint(data, pos)
        if key_length >= 0:
            key: bytes | None = data[pos:pos + key_length]
            pos += key_length
        else:
            _check_null_length(key_length, "key", index)
            key = None
        b = data[pos]  # valueLength: varint; value
        if b < continuation:
            value_length = zigzag[b]
            pos += 1
        elif (b1 := data[pos + 1]) < continuation:
            value_length = zigzag[(b1 << bits) | (b & payload)]
            pos += 2
        else:
            value_length, pos = decode_varint(data, pos)
        if value_length >= 0:
            value: bytes | None = data[pos:pos + value_length]
            pos += value_length
        else:
            _check_null_length(value_length, "value", index)
            value = None
        if data[pos] == 0:  # headersCount: varint; headers
            headers: tuple[Header, ...] = ()
            pos += 1
        else:
            headers, pos = _decode_headers(data, pos, index)
        if pos != record_end:
            raise CorruptRecordError(
                f"record {index} declares {length} bytes but its fields take "
                f"{length + pos - record_end}")
        record = new_record(record_class)
        record.offset = base_offset + offset_delta
        record.timestamp = base_timestamp + timestamp_delta
        record.key = key
        record.value = value
        record.headers = headers
        append(record)
    if pos != len(data):
        raise CorruptRecordError(
            f"the record array holds {len(data)} bytes but its {count} records take {pos}")
    return records


def _check_null_length(length: int, field: str, index: int) -> None:
    """A negative length must be -1 (null); anything else is corrupt."""
    if length != NULL_LENGTH:
        raise CorruptRecordError(f"record {index}: invalid {field} length {length}")


def _decode_headers(data: bytes, pos: int, index: int) -> tuple[tuple[Header, ...], int]:
    count, pos = decode_varint(data, pos)
    if count < 0:
        raise CorruptRecordError(f"record {index}: invalid header count {count}")
    headers = []
    for _ in range(count):
        key_length, pos = decode_varint(data, pos)
        if key_length < 0:
            raise CorruptRecordError(f"record {index}: invalid header key length {key_length}")
        key_end = pos + key_length
        if key_end > len(data):
            raise IndexError("header key runs past the end of the record array")
        key = data[pos:key_end].decode("utf-8")
        value_length, pos = decode_varint(data, key_end)
        if value_length >= 0:
            value: bytes | None = data[pos:pos + value_length]
            pos += value_length
        else:
            _check_null_length(value_length, "header value", index)
            value = None
        headers.append(Header(key, value))
    return tuple(headers), pos


def decompress(compression: int, data: bytes, position: int) -> bytes:
    """The record array of a compressed batch (Kafka compresses all of it as one stream); the
    errors name the batch's `position`."""
    name = COMPRESSION_NAMES.get(compression)
    if name is None:
        raise CorruptRecordError(
            f"batch at position {position}: unknown compression codec id {compression}", position)
    try:
        return codecs.decompress(compression, data)
    except codecs.CodecUnavailableError as error:
        raise UnsupportedCompressionError(
            f"batch at position {position}: unsupported compression {name} ({error})", position) from None
    except codecs.CompressionFormatError as error:
        raise CorruptRecordError(f"batch at position {position}: {error}", position) from None


__all__ = [
    "MAGIC", "LOG_OVERHEAD", "RECORD_BATCH_OVERHEAD", "HEADER_STRUCT",
    "NO_PRODUCER_ID", "NO_PRODUCER_EPOCH", "NO_SEQUENCE", "NO_PARTITION_LEADER_EPOCH",
    "NO_TIMESTAMP", "NONE", "GZIP", "SNAPPY", "LZ4", "ZSTD", "CREATE_TIME", "LOG_APPEND_TIME",
    "COMPRESSION_CODEC_MASK", "TIMESTAMP_TYPE_MASK", "TRANSACTIONAL_FLAG_MASK",
    "CONTROL_FLAG_MASK", "DELETE_HORIZON_FLAG_MASK",
    "CorruptRecordError", "UnsupportedCompressionError", "Header", "Record", "BatchHeader",
    "read_batch_header", "encode_batch", "decode_batch", "iter_batches", "batch_crc_ok",
    "with_base_offset", "with_partition_leader_epoch", "set_base_offset_in_place",
    "set_partition_leader_epoch_in_place", "record_size",
]
