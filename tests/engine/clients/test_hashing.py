"""Kafka's and Java's hash functions match the Java client bit for bit.

Vectors marked "Java" were computed by running OpenJDK 17 on the same inputs.
"""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from engine.common.hashing import (
    JavaHashSetOrder,
    java_abs,
    java_hashmap_capacity,
    java_hashmap_order,
    java_string_hashcode,
    java_string_sort_key,
    murmur2,
    to_int32,
    to_positive,
)
from engine.groups.assignors.types import TopicPartition

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


@pytest.mark.parametrize(("data", "expected"), [
    # Kafka's UtilsTest.testMurmur2
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
    # Java: one vector per tail length, an empty key, high bytes, zero bytes
    (b"", 275646681),
    (b"a", -1563381124),
    (b"ab", 316155434),
    (b"abcd", -1323649548),
    (b"kafka", -798503068),
    (b"\xff\xfe\xfd", 998637092),
    (b"key-42", -187086521),
    (b"\x00" * 7, 1067877175),
])
def test_murmur2_matches_kafka_vectors(data: bytes, expected: int) -> None:
    assert murmur2(data) == expected


@given(st.binary(max_size=64))
def test_murmur2_agrees_with_kafka_python(data: bytes) -> None:
    assert murmur2(data) == to_int32(kafka_python_murmur2(data))


@given(st.binary(max_size=64))
def test_murmur2_is_a_signed_int32(data: bytes) -> None:
    assert INT32_MIN <= murmur2(data) <= INT32_MAX


def test_to_positive_clears_the_sign_bit_instead_of_negating() -> None:
    h = murmur2(b"foobar")
    assert to_positive(h) % 6 == 0
    assert abs(h) % 6 == 2
    assert to_positive(INT32_MIN) == 0
    assert to_positive(-1) == INT32_MAX


def test_java_abs_maps_min_value_to_zero() -> None:
    assert java_abs(INT32_MIN) == 0
    assert java_abs(-5) == 5
    assert java_abs(INT32_MAX) == INT32_MAX


@pytest.mark.parametrize(("s", "expected"), [
    ("test-group", 627841412),
    ("my-group", -1906497762),
    ("", 0),
    ("a", 97),
    ("é", 233),
    ("\U0001F600", 1772899),              # Java: a surrogate pair hashes as two code units
    ("polygenelubricants", INT32_MIN),
])
def test_java_string_hashcode_matches_java(s: str, expected: int) -> None:
    assert java_string_hashcode(s) == expected


@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0xD7FF), max_size=40))
def test_java_string_hashcode_is_31_polynomial_over_bmp_chars(s: str) -> None:
    h = 0
    for ch in s:
        h = (31 * h + ord(ch)) % (1 << 32)
    assert java_string_hashcode(s) == to_int32(h)


def test_java_string_sort_key_compares_utf16_code_units() -> None:
    # U+FF5E is above the high surrogate 0xD83D in UTF-16, though below U+1F600 as a code point
    assert sorted(["\U0001F600", "\uFF5E"], key=java_string_sort_key) == ["\U0001F600", "\uFF5E"]
    assert sorted(["b", "a", "ab"], key=java_string_sort_key) == ["a", "ab", "b"]


def test_hashmap_capacity_doubles_past_three_quarters_full() -> None:
    assert java_hashmap_capacity(0) == 16
    assert java_hashmap_capacity(12) == 16
    assert java_hashmap_capacity(13) == 32
    assert java_hashmap_capacity(49) == 128


def test_hashmap_order_matches_java() -> None:
    keys = [f"consumer-{i}" for i in range(1, 14)]
    java_order = ("consumer-11 consumer-10 consumer-6 consumer-5 consumer-4 consumer-3 consumer-2 "
                  "consumer-13 consumer-1 consumer-12 consumer-9 consumer-8 consumer-7").split()
    assert java_hashmap_order(keys, java_string_hashcode) == java_order


def test_hashset_order_puts_a_re_added_key_last_in_its_bucket() -> None:
    partitions: JavaHashSetOrder[TopicPartition] = JavaHashSetOrder(TopicPartition.java_hashcode)
    for p in (1, 17, 5):
        partitions.add(TopicPartition("t0", p))
    partitions.remove(TopicPartition("t0", 1))
    partitions.add(TopicPartition("t0", 1))
    partitions.add(TopicPartition("t1", 0))
    assert [str(tp) for tp in partitions.in_java_order()] == ["t0-5", "t0-17", "t0-1", "t1-0"]   # Java
    assert partitions.first() == TopicPartition("t0", 5)
    assert len(partitions) == 4 and TopicPartition("t0", 1) in partitions
