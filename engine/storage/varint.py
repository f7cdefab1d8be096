"""Zigzag varints, the variable-length integers inside a v2 record (Kafka's ByteUtils).

    zigzag(n)  = (n << 1) ^ (n >> 31)    for a varint  (int32)
               = (n << 1) ^ (n >> 63)    for a varlong (int64)
    encoding   = zigzag(n) in 7-bit groups, least significant group first; every byte but the
                 last has its high bit (the continuation bit) set.

Zigzag maps small magnitudes of either sign to small unsigned numbers (0, -1, 1, -2, … become
0, 1, 2, 3, …), so -1 (Kafka's "null" length) costs one byte. A varint takes at most 5 bytes,
a varlong 10. Python's `>>` on a negative int is arithmetic at any width, so one zigzag formula
serves both.

Decoders are pure functions `(buf, position) -> (value, new_position)`; they raise `ValueError`
for an over-long or out-of-range encoding and `IndexError` when the buffer ends mid-varint.

For the record hot loops the module also builds two lookup tables covering every value whose
encoding fits in one or two bytes (zigzag value below 2**14, i.e. n in [-8192, 8191]):
`ENCODED_SMALL_VARINTS[n]` is the encoding of n (a dict: any other n raises KeyError) and
`SMALL_ZIGZAG_VALUES[z]` decodes z.
"""
from __future__ import annotations

BytesLike = bytes | bytearray | memoryview

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1

CONTINUATION_BIT = 0x80
PAYLOAD_MASK = 0x7F
PAYLOAD_BITS = 7
MAX_VARINT_BYTES = 5
MAX_VARLONG_BYTES = 10
UINT32_MAX = (1 << 32) - 1
UINT64_MAX = (1 << 64) - 1

SMALL_VARINT_BYTES = 2                                          # table entries take 1 or 2 bytes
SMALL_ZIGZAG_LIMIT = 1 << (PAYLOAD_BITS * SMALL_VARINT_BYTES)   # 16384 zigzag values
SMALL_VARINT_MIN = -(SMALL_ZIGZAG_LIMIT // 2)                   # -8192
SMALL_VARINT_MAX = SMALL_ZIGZAG_LIMIT // 2 - 1                  # 8191


def zigzag_encode(n: int) -> int:
    """Map a signed int64 to an unsigned one: 0, -1, 1, -2, … become 0, 1, 2, 3, …"""
    return (n << 1) ^ (n >> 63)


def zigzag_decode(z: int) -> int:
    """Inverse of `zigzag_encode`."""
    return (z >> 1) ^ -(z & 1)


def _encode_unsigned(z: int) -> bytes:
    out = bytearray()
    while z > PAYLOAD_MASK:
        out.append((z & PAYLOAD_MASK) | CONTINUATION_BIT)
        z >>= PAYLOAD_BITS
    out.append(z)
    return bytes(out)


def encode_varint(n: int) -> bytes:
    """The zigzag varint encoding of an int32."""
    if not INT32_MIN <= n <= INT32_MAX:
        raise ValueError(f"varint out of int32 range: {n}")
    return _encode_unsigned(zigzag_encode(n))


def encode_varlong(n: int) -> bytes:
    """The zigzag varlong encoding of an int64."""
    if not INT64_MIN <= n <= INT64_MAX:
        raise ValueError(f"varlong out of int64 range: {n}")
    return _encode_unsigned(zigzag_encode(n))


def size_of_varint(n: int) -> int:
    """Bytes taken by the varint (or varlong: the size rule is the same) encoding of n."""
    z = (n << 1) ^ (n >> 63)   # zigzag_encode, inline: the producer sizes every record it sends
    return 1 if z <= PAYLOAD_MASK else (z.bit_length() + PAYLOAD_BITS - 1) // PAYLOAD_BITS


size_of_varlong = size_of_varint


def _decode_unsigned(buf: BytesLike, position: int, max_bytes: int) -> tuple[int, int]:
    z = 0
    shift = 0
    for index in range(position, position + max_bytes):
        byte = buf[index]
        z |= (byte & PAYLOAD_MASK) << shift
        if byte < CONTINUATION_BIT:
            return z, index + 1
        shift += PAYLOAD_BITS
    raise ValueError(f"varint at position {position} is longer than {max_bytes} bytes")


def decode_varint(buf: BytesLike, position: int = 0) -> tuple[int, int]:
    """Read an int32 varint at `position`; return (value, position after it)."""
    z, end = _decode_unsigned(buf, position, MAX_VARINT_BYTES)
    if z > UINT32_MAX:
        raise ValueError(f"varint at position {position} overflows int32")
    return zigzag_decode(z), end


def decode_varlong(buf: BytesLike, position: int = 0) -> tuple[int, int]:
    """Read an int64 varlong at `position`; return (value, position after it)."""
    z, end = _decode_unsigned(buf, position, MAX_VARLONG_BYTES)
    if z > UINT64_MAX:
        raise ValueError(f"varlong at position {position} overflows int64")
    return zigzag_decode(z), end


ENCODED_SMALL_VARINTS: dict[int, bytes] = {
    n: encode_varint(n) for n in range(SMALL_VARINT_MIN, SMALL_VARINT_MAX + 1)}
"""`ENCODED_SMALL_VARINTS[n]` is `encode_varint(n)` for n in [-8192, 8191]; KeyError outside."""

SMALL_VARINT_SIZES: dict[int, int] = {n: len(encoded) for n, encoded in ENCODED_SMALL_VARINTS.items()}
"""`SMALL_VARINT_SIZES[n]` is `size_of_varint(n)` (1 or 2) for n in [-8192, 8191]; KeyError outside."""

SMALL_ZIGZAG_VALUES: list[int] = [zigzag_decode(z) for z in range(SMALL_ZIGZAG_LIMIT)]
"""`SMALL_ZIGZAG_VALUES[z]` is `zigzag_decode(z)` for the zigzag values of 1- and 2-byte varints.

A one-byte varint b (b < 0x80) decodes to `SMALL_ZIGZAG_VALUES[b]`; a two-byte varint b0 b1
(b0 >= 0x80 > b1) to `SMALL_ZIGZAG_VALUES[(b1 << 7) | (b0 & 0x7F)]`.
"""
