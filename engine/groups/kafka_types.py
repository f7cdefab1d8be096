"""Kafka's fixed-width protocol types, as the non-flexible message versions encode them.

    INT16 / INT32 / INT64   big-endian, signed
    STRING                  INT16 length, then UTF-8 bytes
    NULLABLE_STRING         as STRING; length -1 means null
    BYTES                   INT32 length, then the bytes
    NULLABLE_BYTES          as BYTES; length -1 means null
    ARRAY                   INT32 count, then the elements

Writers return bytes; readers are pure functions `read_x(buf, position) -> (value, new_position)`.
A truncated buffer raises ValueError (never an IndexError from deep inside).
"""
from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import TypeVar

T = TypeVar("T")

INT16 = struct.Struct(">h")
INT32 = struct.Struct(">i")
INT64 = struct.Struct(">q")
NULL_LENGTH = -1


def int16(value: int) -> bytes:
    return INT16.pack(value)


def int32(value: int) -> bytes:
    return INT32.pack(value)


def int64(value: int) -> bytes:
    return INT64.pack(value)


def string(value: str) -> bytes:
    data = value.encode("utf-8")
    if len(data) > 0x7FFF:
        raise ValueError(f"a Kafka string holds at most 32767 bytes, not {len(data)}")
    return INT16.pack(len(data)) + data


def nullable_string(value: str | None) -> bytes:
    return INT16.pack(NULL_LENGTH) if value is None else string(value)


def bytes_field(value: bytes) -> bytes:
    return INT32.pack(len(value)) + bytes(value)


def nullable_bytes(value: bytes | None) -> bytes:
    return INT32.pack(NULL_LENGTH) if value is None else bytes_field(value)


def array(items: Iterable[T], write: Callable[[T], bytes]) -> bytes:
    parts = [write(item) for item in items]
    return INT32.pack(len(parts)) + b"".join(parts)


def _need(buf: bytes, position: int, size: int) -> None:
    if position + size > len(buf):
        raise ValueError(f"truncated: need {size} bytes at position {position}, have {len(buf) - position}")


def read_int16(buf: bytes, position: int) -> tuple[int, int]:
    _need(buf, position, INT16.size)
    return INT16.unpack_from(buf, position)[0], position + INT16.size


def read_int32(buf: bytes, position: int) -> tuple[int, int]:
    _need(buf, position, INT32.size)
    return INT32.unpack_from(buf, position)[0], position + INT32.size


def read_int64(buf: bytes, position: int) -> tuple[int, int]:
    _need(buf, position, INT64.size)
    return INT64.unpack_from(buf, position)[0], position + INT64.size


def read_nullable_string(buf: bytes, position: int) -> tuple[str | None, int]:
    length, position = read_int16(buf, position)
    if length == NULL_LENGTH:
        return None, position
    if length < 0:
        raise ValueError(f"bad string length {length}")
    _need(buf, position, length)
    return bytes(buf[position:position + length]).decode("utf-8"), position + length


def read_string(buf: bytes, position: int) -> tuple[str, int]:
    value, position = read_nullable_string(buf, position)
    if value is None:
        raise ValueError("a null where a non-null string was expected")
    return value, position


def read_nullable_bytes(buf: bytes, position: int) -> tuple[bytes | None, int]:
    length, position = read_int32(buf, position)
    if length == NULL_LENGTH:
        return None, position
    if length < 0:
        raise ValueError(f"bad bytes length {length}")
    _need(buf, position, length)
    return bytes(buf[position:position + length]), position + length


def read_bytes(buf: bytes, position: int) -> tuple[bytes, int]:
    value, position = read_nullable_bytes(buf, position)
    if value is None:
        raise ValueError("a null where non-null bytes were expected")
    return value, position


def read_array(buf: bytes, position: int, read: Callable[[bytes, int], tuple[T, int]]) -> tuple[list[T], int]:
    count, position = read_int32(buf, position)
    if count < 0:
        return [], position     # a null array: treated as empty
    out = []
    for _ in range(count):
        item, position = read(buf, position)
        out.append(item)
    return out, position
