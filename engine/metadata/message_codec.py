"""Kafka's generated-message wire format for flexible versions, driven by a schema of Fields.

Kafka's message classes (RegisterBrokerRecord, LeaderChangeMessage, …) are generated from JSON
schemas by generator/…/MessageDataGenerator.java; every KRaft record is "flexibleVersions": "0+",
so only the flexible (KIP-482) rules are needed:

    int8 int16 int32 int64 uint16   big-endian, 1 2 4 8 2 bytes
    bool                            1 byte, 0 or 1 (read: any non-zero byte is true)
    uuid                            16 bytes: the most then the least significant long
    string                          COMPACT_STRING: unsigned varint (UTF-8 length + 1), then the bytes;
                                    null (nullable fields only) is a single 0
    []T                             COMPACT_ARRAY: unsigned varint (count + 1), then the elements;
                                    null (nullable fields only) is a single 0
    struct                          its fields, then its own tagged-fields section
    tagged fields section           unsigned varint count, then per field in ascending tag order:
                                    unsigned varint tag, unsigned varint size, the field's bytes.
                                    A tagged field is written only when it differs from its default.

A field present only from version N ("versions": "N+") is skipped below N, and writing it there with
a non-default value is refused, as the generated `write` does ("Attempted to write a non-default …").
On read, tagged fields this schema does not know at that version are skipped (Kafka keeps them as
unknown tagged fields; the lab drops them, so they do not survive a decode/encode round trip).

The JSON form is the generated *JsonConverter's `write`: field names lower-camel-case (Kafka's name
with its first letter lowered), schema order, fields of other versions left out, tagged fields only
when not default, uuids as their base64 text.

Every error is a ValueError naming the field (its path, "PartitionRecord.replicas[2]") and, on read,
the byte offset.
"""
from __future__ import annotations

import base64
import binascii
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

CONTINUATION_BIT = 0x80
PAYLOAD_MASK = 0x7F
PAYLOAD_BITS = 7
MAX_UNSIGNED_VARINT_BYTES = 5          # ByteUtils.readUnsignedVarint: an int32's 32 bits
MAX_STRING_BYTES = 0x7FFF              # the generated write: "'x' field is too long to be serialized"
UUID_BYTES = 16
UUID_TEXT_CHARS = 22                   # Uuid.toString: URL-safe base64 of 16 bytes, no padding
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"   # Uuid.ZERO_UUID (all 16 bytes zero)

# (struct format, lowest, highest) of each fixed-width type.
FIXED: dict[str, tuple[struct.Struct, int, int]] = {
    "int8": (struct.Struct(">b"), -(1 << 7), (1 << 7) - 1),
    "int16": (struct.Struct(">h"), -(1 << 15), (1 << 15) - 1),
    "int32": (struct.Struct(">i"), -(1 << 31), (1 << 31) - 1),
    "int64": (struct.Struct(">q"), -(1 << 63), (1 << 63) - 1),
    "uint16": (struct.Struct(">H"), 0, (1 << 16) - 1),
}
PRIMITIVES = (*FIXED, "bool", "uuid", "string")


# -- uuids ------------------------------------------------------------------------------------------
def uuid_from_bytes(data: bytes) -> str:
    """Kafka's Uuid.toString: the 16 bytes as URL-safe base64 without padding (22 characters), the
    same form as the lab's ZooKeeper-mode topic ids (engine.metadata.zk.new_topic_id)."""
    if len(data) != UUID_BYTES:
        raise ValueError(f"a uuid is {UUID_BYTES} bytes, got {len(data)}")
    return base64.urlsafe_b64encode(bytes(data)).decode("ascii").rstrip("=")


def uuid_to_bytes(text: str) -> bytes:
    """Kafka's Uuid.fromString, strictly: only the canonical 22-character form of 16 bytes."""
    if not isinstance(text, str) or len(text) != UUID_TEXT_CHARS:
        raise ValueError(f"a uuid is {UUID_TEXT_CHARS} characters of URL-safe base64, got {text!r}")
    try:
        data = base64.urlsafe_b64decode(text + "==")
    except (binascii.Error, ValueError) as error:
        raise ValueError(f"a uuid is URL-safe base64, got {text!r}") from error
    if uuid_from_bytes(data) != text:
        raise ValueError(f"{text!r} is not the canonical text of a uuid (its last character carries 2 bits)")
    return data


# -- the schema -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    """One field of a message schema, as its JSON declares it. `kind` is a primitive type name or
    the dataclass of a struct; `array` makes it `[]kind`. Versions, nullable versions and tagged
    versions are all "since+" in the KRaft schemas, so one `since` serves the three."""
    name: str                      # Kafka's name, "PartitionId"
    kind: str | type
    since: int = 0
    array: bool = False
    nullable: bool = False
    tag: int | None = None
    default: Any = None            # None: the type's default (0, false, "", empty, zero uuid) or null if nullable

    @property
    def attr(self) -> str:
        return snake_case(self.name)

    @property
    def json_name(self) -> str:
        return self.name[:1].lower() + self.name[1:]     # FieldSpec.camelCaseName

    def default_value(self) -> Any:
        if self.default is not None:
            return self.default
        if self.nullable:
            return None
        if self.array:
            return ()
        if self.kind == "bool":
            return False
        if self.kind == "string":
            return ""
        if self.kind == "uuid":
            return ZERO_UUID
        if isinstance(self.kind, str):
            return 0
        return None          # a struct field: its own defaults (see is_default)

    def is_default(self, value: Any) -> bool:
        default = self.default_value()
        if self.array and value is not None and default is not None:
            return list(value) == list(default)
        if default is None and isinstance(self.kind, type) and not self.array:
            return value == self.kind()
        return bool(value == default) and (value is None) == (default is None)


def snake_case(name: str) -> str:
    """MessageGenerator.toSnakeCase: "PartitionId" -> "partition_id", "KRaftVersion" -> "kraft_version"."""
    out, previous_capital = [], True
    for char in name:
        if char.isupper():
            if not previous_capital:
                out.append("_")
            out.append(char.lower())
            previous_capital = True
        else:
            out.append(char)
            previous_capital = False
    return "".join(out)


def fields_of(cls: type) -> tuple[Field, ...]:
    fields: tuple[Field, ...] = cls.FIELDS     # type: ignore[attr-defined]
    return fields


# -- unsigned varints -------------------------------------------------------------------------------
def encode_unsigned_varint(value: int) -> bytes:
    """ByteUtils.writeUnsignedVarint: 7-bit groups, least significant first."""
    if not 0 <= value <= 0xFFFFFFFF:
        raise ValueError(f"unsigned varint out of range: {value}")
    out = bytearray()
    while value > PAYLOAD_MASK:
        out.append((value & PAYLOAD_MASK) | CONTINUATION_BIT)
        value >>= PAYLOAD_BITS
    out.append(value)
    return bytes(out)


class Reader:
    """A position in a byte string; every read names what it reads in its error."""

    def __init__(self, data: bytes | bytearray | memoryview, position: int = 0, end: int | None = None) -> None:
        self.data = bytes(data)
        self.position = position
        self.end = len(self.data) if end is None else end

    @property
    def remaining(self) -> int:
        return self.end - self.position

    def take(self, count: int, what: str) -> bytes:
        if count > self.remaining:
            raise ValueError(f"{what} at offset {self.position}: truncated, needs {count} byte(s), "
                             f"{self.remaining} left")
        chunk = self.data[self.position:self.position + count]
        self.position += count
        return chunk

    def unsigned_varint(self, what: str) -> int:
        start, value = self.position, 0
        for index in range(MAX_UNSIGNED_VARINT_BYTES):
            if self.position >= self.end:
                raise ValueError(f"{what} at offset {start}: truncated inside an unsigned varint")
            byte = self.data[self.position]
            self.position += 1
            value |= (byte & PAYLOAD_MASK) << (PAYLOAD_BITS * index)
            if not byte & CONTINUATION_BIT:
                return value
        raise ValueError(f"{what} at offset {start}: an unsigned varint longer than {MAX_UNSIGNED_VARINT_BYTES} bytes")


# -- writing ----------------------------------------------------------------------------------------
def write_struct(obj: Any, version: int, path: str) -> bytes:
    """The bytes of `obj` (a dataclass with FIELDS) at `version`: its fields, then its tagged ones."""
    out, tagged = bytearray(), []
    for field in fields_of(type(obj)):
        value = getattr(obj, field.attr)
        where = f"{path}.{field.attr}"
        if version < field.since:
            if not field.is_default(value):
                raise ValueError(f"{where}: a non-default value ({value!r}) cannot be written at version "
                                 f"{version}; the field exists from version {field.since}")
            continue
        if field.tag is not None:
            if not field.is_default(value):
                tagged.append((field.tag, _write_field(field, value, version, where)))
            continue
        out += _write_field(field, value, version, where)
    out += encode_unsigned_varint(len(tagged))
    for tag, data in sorted(tagged):
        out += encode_unsigned_varint(tag) + encode_unsigned_varint(len(data)) + data
    return bytes(out)


def _write_field(field: Field, value: Any, version: int, where: str) -> bytes:
    if value is None:
        if not field.nullable:
            raise ValueError(f"{where}: null is not allowed (the field is not nullable)")
        return b"\x00"
    if not field.array:
        return _write_value(field.kind, value, version, where)
    if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
        raise ValueError(f"{where}: expected a list, got {value!r}")
    items = list(value)
    out = bytearray(encode_unsigned_varint(len(items) + 1))
    for index, item in enumerate(items):
        if item is None:
            raise ValueError(f"{where}[{index}]: null is not allowed in an array")
        out += _write_value(field.kind, item, version, f"{where}[{index}]")
    return bytes(out)


def _write_value(kind: str | type, value: Any, version: int, where: str) -> bytes:
    if isinstance(kind, type):
        if not isinstance(value, kind):
            raise ValueError(f"{where}: expected a {kind.__name__}, got {value!r}")
        return write_struct(value, version, where)
    if kind in FIXED:
        packer, lowest, highest = FIXED[kind]
        if isinstance(value, bool) or not isinstance(value, int) or not lowest <= value <= highest:
            raise ValueError(f"{where}: expected an {kind} ({lowest}..{highest}), got {value!r}")
        return packer.pack(value)
    if kind == "bool":
        if not isinstance(value, bool):
            raise ValueError(f"{where}: expected a bool, got {value!r}")
        return b"\x01" if value else b"\x00"
    if kind == "uuid":
        try:
            return uuid_to_bytes(value)
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None
    if kind == "string":
        if not isinstance(value, str):
            raise ValueError(f"{where}: expected a string, got {value!r}")
        data = value.encode("utf-8")
        if len(data) > MAX_STRING_BYTES:
            raise ValueError(f"{where}: {len(data)} bytes of UTF-8, longer than {MAX_STRING_BYTES}")
        return encode_unsigned_varint(len(data) + 1) + data
    raise ValueError(f"{where}: unknown type {kind!r}")


# -- reading ----------------------------------------------------------------------------------------
def read_struct(cls: type, reader: Reader, version: int, path: str) -> Any:
    """A `cls` read at `version`; fields of other versions keep their defaults."""
    values: dict[str, Any] = {}
    by_tag: dict[int, Field] = {}
    for field in fields_of(cls):
        if version < field.since:
            continue
        if field.tag is not None:
            by_tag[field.tag] = field
            continue
        values[field.attr] = _read_field(field, reader, version, f"{path}.{field.attr}")
    count = reader.unsigned_varint(f"{path} tagged field count")
    for _ in range(count):
        tag = reader.unsigned_varint(f"{path} tag")
        size = reader.unsigned_varint(f"{path} tag {tag} size")
        body = Reader(reader.data, reader.position, reader.position + size)
        reader.take(size, f"{path} tag {tag} ({size} bytes)")
        known = by_tag.get(tag)
        if known is None:
            continue             # an unknown tagged field: skipped (see the module docstring)
        where = f"{path}.{known.attr}"
        values[known.attr] = _read_field(known, body, version, where)
        if body.remaining:
            raise ValueError(f"{where} at offset {body.position}: {body.remaining} byte(s) left in the tagged field")
    return cls(**values)


def _read_field(field: Field, reader: Reader, version: int, where: str) -> Any:
    if not field.array:
        if field.kind == "string":
            return _read_string(reader, field.nullable, where)
        return _read_value(field.kind, reader, version, where)
    start = reader.position
    length = reader.unsigned_varint(where)
    if length == 0:
        if not field.nullable:
            raise ValueError(f"{where} at offset {start}: null, but the field is not nullable")
        return None
    count = length - 1
    if count > reader.remaining:     # each element takes at least one byte (ArrayOf's guard)
        raise ValueError(f"{where} at offset {start}: {count} elements, but only {reader.remaining} byte(s) left")
    return [_read_value(field.kind, reader, version, f"{where}[{index}]") for index in range(count)]


def _read_value(kind: str | type, reader: Reader, version: int, where: str) -> Any:
    if isinstance(kind, type):
        return read_struct(kind, reader, version, where)
    if kind in FIXED:
        packer = FIXED[kind][0]
        return packer.unpack(reader.take(packer.size, where))[0]
    if kind == "bool":
        return reader.take(1, where) != b"\x00"
    if kind == "uuid":
        return uuid_from_bytes(reader.take(UUID_BYTES, where))
    if kind == "string":
        return _read_string(reader, False, where)
    raise ValueError(f"{where}: unknown type {kind!r}")


def _read_string(reader: Reader, nullable: bool, where: str) -> str | None:
    start = reader.position
    length = reader.unsigned_varint(where)
    if length == 0:
        if not nullable:
            raise ValueError(f"{where} at offset {start}: null, but the field is not nullable")
        return None
    data = reader.take(length - 1, where)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{where} at offset {start}: not UTF-8 ({error.reason})") from None


# -- JSON -------------------------------------------------------------------------------------------
def json_of(obj: Any, version: int) -> dict[str, Any]:
    """The generated JsonConverter's write(obj, version), as a dict in schema order."""
    node: dict[str, Any] = {}
    for field in fields_of(type(obj)):
        if version < field.since:
            continue
        value = getattr(obj, field.attr)
        if field.tag is not None and field.is_default(value):
            continue
        node[field.json_name] = _json_value(field, value, version)
    return node


def _json_value(field: Field, value: Any, version: int) -> Any:
    if value is None:
        return None
    one: Callable[[Any], Any] = (lambda item: json_of(item, version)) if isinstance(field.kind, type) else _plain
    return [one(item) for item in value] if field.array else one(value)


def _plain(value: Any) -> Any:
    return value
