"""The records of whole batches as Python objects: what `Log.read` and a consumer's fetch hand on.

    decode_records(data, first_offset, end_offset, shape, *, verify_crc, keep_control) -> list

`data` is v2 batches back to back, as a segment read or a Fetch answer holds them; each record
with first_offset <= offset < end_offset becomes one object, built as `shape` says: an instance
of `shape.cls` made by `object.__new__` and given its attributes one by one with
`object.__setattr__`, in the shape's order (a frozen dataclass's own __init__ does the same, so
a consumer's records are the objects its constructor would build). An attribute takes a field of
the record (OFFSET, TIMESTAMP, KEY, VALUE, HEADERS, LEADER_EPOCH — the batch's
partitionLeaderEpoch — TIMESTAMP_TYPE) or a `Constant` (a consumer's topic and partition).
Timestamps are those of `record_batch.decode_batch` (maxTimestamp for every record of a
LogAppendTime batch); headers are a tuple of `shape.header_factory(key, value)`, or of
(key, value) pairs without one — the empty tuple for a record without headers.

Control batches (transaction markers): a log read keeps their records (`keep_control=True`, as
decode_batch); a consumer drops them (Kafka's consumer never hands them to the application) but
still decodes and checks them. `verify_crc` checks every batch's CRC-32C (a consumer's
check.crcs=true); a log reading its own flushed segments skips it.

Two implementations with identical output and the same acceptance rules as decode_batch
(ill-formed or truncated data raises CorruptRecordError; so does a record offset or timestamp
beyond int64, which only a crafted batch has):
- the C extension (`engine.storage._columnar.decode_objects`) walks the bytes once and builds
  the objects directly, with no intermediate Record per record (~0.1 µs a 100-byte Record, a
  __slots__ class whose members it fills in place; ~0.2 µs a ConsumedRecord, through
  object.__setattr__; against ~1 µs through decode_batch). An object whose attributes are all
  atomic (bytes, int, str, None, the empty tuple) is left out of the cyclic garbage collector, as
  CPython leaves out a tuple of atomic values: walking a fetch's thousands of young records cost
  the collector more than decoding them. (Setting a container that refers back to such a record
  on it would make a cycle the collector never frees; nothing in the engine does.)
- `decode_records_python`, the fallback when the extension was not built: decode_batch per batch.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

# engine.storage.crc's backend, called directly: one C call per batch.
from crc32c import crc32c

from engine.storage import record_batch as rb
from engine.storage.record_batch import BytesLike, CorruptRecordError
from engine.storage.varint import INT64_MAX, INT64_MIN

try:
    from engine.storage import _columnar
except ImportError:  # built by `pip install -e .`; a machine without a compiler has none
    _columnar = None

HAS_EXTENSION = _columnar is not None

# The record fields an attribute can take (the codes _columnar.c's decode_objects knows).
CONSTANT, OFFSET, TIMESTAMP, KEY, VALUE, HEADERS, LEADER_EPOCH, TIMESTAMP_TYPE = range(-1, 7)


class Constant(NamedTuple):
    """An attribute every record of one call gets, e.g. the topic a consumer fetched."""
    value: object


class RecordShape(NamedTuple):
    """What object a record becomes: `cls`, attributes (name, field code, constant) in order."""
    cls: type
    fields: tuple[tuple[str, int, object], ...]
    header_factory: Callable[[str, bytes | None], object] | None = None


def record_shape(cls: type, attributes: dict[str, int | Constant],
                 header_factory: Callable[[str, bytes | None], object] | None = None) -> RecordShape:
    """A shape from {attribute name: field code or Constant}, in the dict's order."""
    if cls.__new__ is not object.__new__:
        raise TypeError(f"{cls.__name__} defines __new__: its records cannot be built field by field")
    fields = tuple((name, CONSTANT, source.value) if isinstance(source, Constant) else (name, source, None)
                   for name, source in attributes.items())
    return RecordShape(cls, fields, header_factory)


# Log.read's records: record_batch.Record, headers as record_batch.Header.
RECORD = record_shape(rb.Record, {"offset": OFFSET, "timestamp": TIMESTAMP, "key": KEY, "value": VALUE,
                                  "headers": HEADERS}, rb.Header)


def decode_records(data: BytesLike, first_offset: int, end_offset: int, shape: RecordShape, *,
                   verify_crc: bool = True, keep_control: bool = False) -> list:
    """The records of the batches in `data` with first_offset <= offset < end_offset, as objects."""
    if _columnar is None:
        return decode_records_python(data, first_offset, end_offset, shape, verify_crc=verify_crc,
                                     keep_control=keep_control)
    return decode_records_c(data, first_offset, end_offset, shape, verify_crc=verify_crc,
                            keep_control=keep_control)


def decode_records_c(data: BytesLike, first_offset: int, end_offset: int, shape: RecordShape, *,
                     verify_crc: bool = True, keep_control: bool = False) -> list:
    """`decode_records` through the C extension (ImportError when it was not built)."""
    if _columnar is None:
        raise ImportError("engine.storage._columnar is not built (run `pip install -e .`)")
    # rb.decompress: the codecs stay in one place, in Python, for both implementations.
    return _columnar.decode_objects(data, _clamp(first_offset), _clamp(end_offset),
                                    crc32c if verify_crc else None, rb.decompress, keep_control,
                                    shape.cls, shape.fields, shape.header_factory)


def _clamp(offset: int) -> int:
    return min(max(offset, INT64_MIN), INT64_MAX)


# -- the pure-Python fallback ------------------------------------------------------------------

def decode_records_python(data: BytesLike, first_offset: int, end_offset: int, shape: RecordShape, *,
                          verify_crc: bool = True, keep_control: bool = False) -> list:
    """`decode_records` in pure Python: one `record_batch.decode_batch` per batch."""
    out: list = []
    position, size = 0, len(data)
    while position < size:
        header, records = rb.decode_batch(data, position, verify_crc=verify_crc)
        _check_int64(records, position)
        position += header.size_in_bytes
        if header.is_control and not keep_control:
            continue
        kept = [r for r in records if first_offset <= r.offset < end_offset]
        if shape == RECORD:
            out += kept    # decode_batch's own Records are exactly these objects
        else:
            out += [_build(shape, header, record) for record in kept]
    return out


def _build(shape: RecordShape, header: rb.BatchHeader, record: rb.Record) -> object:
    values = {OFFSET: record.offset, TIMESTAMP: record.timestamp, KEY: record.key, VALUE: record.value,
              LEADER_EPOCH: header.partition_leader_epoch, TIMESTAMP_TYPE: header.timestamp_type}
    obj: object = object.__new__(shape.cls)
    for name, code, constant in shape.fields:
        if code == CONSTANT:
            value = constant
        elif code == HEADERS:
            value = tuple((h.key, h.value) if shape.header_factory is None else shape.header_factory(h.key, h.value)
                          for h in record.headers)
        else:
            value = values[code]
        object.__setattr__(obj, name, value)
    return obj


def _check_int64(records: list[rb.Record], position: int) -> None:
    """The C decoder keeps offsets and timestamps in int64: a crafted batch can go beyond."""
    for record in records:
        if not (INT64_MIN <= record.offset <= INT64_MAX and INT64_MIN <= record.timestamp <= INT64_MAX):
            raise CorruptRecordError(
                f"batch at position {position}: record offset or timestamp overflows int64", position)


__all__ = ["CONSTANT", "HAS_EXTENSION", "HEADERS", "KEY", "LEADER_EPOCH", "OFFSET", "RECORD", "TIMESTAMP",
           "TIMESTAMP_TYPE", "VALUE", "Constant", "RecordShape", "decode_records", "decode_records_c",
           "decode_records_python", "record_shape"]
