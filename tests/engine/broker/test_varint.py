"""Zigzag varints and varlongs, as Kafka's ByteUtils writes them."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.storage.varint import (
    ENCODED_SMALL_VARINTS,
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    SMALL_VARINT_MAX,
    SMALL_VARINT_MIN,
    SMALL_ZIGZAG_LIMIT,
    SMALL_ZIGZAG_VALUES,
    decode_varint,
    decode_varlong,
    encode_varint,
    encode_varlong,
    size_of_varint,
    size_of_varlong,
    zigzag_decode,
    zigzag_encode,
)

# (value, encoding) pairs worked out by hand from the zigzag rule and 7-bit little-endian groups.
KNOWN_VARINTS = [
    (0, "00"),
    (-1, "01"),
    (1, "02"),
    (63, "7e"),
    (-64, "7f"),
    (64, "8001"),
    (-65, "8101"),
    (8191, "fe7f"),
    (-8192, "ff7f"),
    (8192, "808001"),
    (-8193, "818001"),
    (INT32_MAX, "feffffff0f"),
    (INT32_MIN, "ffffffff0f"),
]
KNOWN_VARLONGS = KNOWN_VARINTS + [
    (INT32_MAX + 1, "8080808010"),
    (INT64_MAX, "feffffffffffffffff01"),
    (INT64_MIN, "ffffffffffffffffff01"),
]


@pytest.mark.parametrize(("value", "encoding"), KNOWN_VARINTS)
def test_it_encodes_and_decodes_known_varints(value: int, encoding: str) -> None:
    data = bytes.fromhex(encoding)
    assert encode_varint(value) == data
    assert decode_varint(data) == (value, len(data))
    assert size_of_varint(value) == len(data)


@pytest.mark.parametrize(("value", "encoding"), KNOWN_VARLONGS)
def test_it_encodes_and_decodes_known_varlongs(value: int, encoding: str) -> None:
    data = bytes.fromhex(encoding)
    assert encode_varlong(value) == data
    assert decode_varlong(data) == (value, len(data))
    assert size_of_varlong(value) == len(data)


def test_zigzag_interleaves_signs() -> None:
    assert [zigzag_encode(n) for n in (0, -1, 1, -2, 2)] == [0, 1, 2, 3, 4]
    assert zigzag_encode(INT64_MIN) == 2**64 - 1
    assert zigzag_decode(2**64 - 1) == INT64_MIN


def test_it_returns_the_position_after_the_varint() -> None:
    data = b"\xaa" + encode_varint(300) + encode_varint(-1)
    value, position = decode_varint(data, 1)
    assert (value, position) == (300, 3)
    assert decode_varint(data, position) == (-1, 4)


@pytest.mark.parametrize("value", [INT32_MAX + 1, INT32_MIN - 1])
def test_it_refuses_a_varint_outside_int32(value: int) -> None:
    with pytest.raises(ValueError, match="int32"):
        encode_varint(value)


@pytest.mark.parametrize("value", [INT64_MAX + 1, INT64_MIN - 1])
def test_it_refuses_a_varlong_outside_int64(value: int) -> None:
    with pytest.raises(ValueError, match="int64"):
        encode_varlong(value)


def test_it_refuses_a_varint_longer_than_five_bytes() -> None:
    with pytest.raises(ValueError, match="longer than 5 bytes"):
        decode_varint(b"\x80\x80\x80\x80\x80\x01")


def test_it_refuses_a_five_byte_varint_that_overflows_int32() -> None:
    with pytest.raises(ValueError, match="overflows int32"):
        decode_varint(b"\xff\xff\xff\xff\x1f")


def test_it_refuses_a_varlong_longer_than_ten_bytes() -> None:
    with pytest.raises(ValueError, match="longer than 10 bytes"):
        decode_varlong(b"\x80" * 10 + b"\x01")


def test_a_varint_cut_short_raises_index_error() -> None:
    with pytest.raises(IndexError):
        decode_varint(b"\x80\x80")


def test_the_encoding_table_covers_every_one_and_two_byte_varint() -> None:
    for n in range(SMALL_VARINT_MIN, SMALL_VARINT_MAX + 1):
        assert ENCODED_SMALL_VARINTS[n] == encode_varint(n)
        assert len(ENCODED_SMALL_VARINTS[n]) <= 2
    for outside in (SMALL_VARINT_MAX + 1, 2 * SMALL_VARINT_MAX, SMALL_VARINT_MIN - 1):
        with pytest.raises(KeyError):
            ENCODED_SMALL_VARINTS[outside]


def test_the_decoding_table_inverts_zigzag() -> None:
    assert len(SMALL_ZIGZAG_VALUES) == SMALL_ZIGZAG_LIMIT
    for z, n in enumerate(SMALL_ZIGZAG_VALUES):
        assert zigzag_encode(n) == z


@given(st.integers(min_value=INT32_MIN, max_value=INT32_MAX))
def test_varints_round_trip(value: int) -> None:
    data = encode_varint(value)
    assert decode_varint(data + b"\x00") == (value, len(data))
    assert len(data) == size_of_varint(value) <= 5


@given(st.integers(min_value=INT64_MIN, max_value=INT64_MAX))
def test_varlongs_round_trip(value: int) -> None:
    data = encode_varlong(value)
    assert decode_varlong(data + b"\x00") == (value, len(data))
    assert len(data) == size_of_varlong(value) <= 10
