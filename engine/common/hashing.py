"""Java's and Kafka's hash functions, reproduced bit for bit on Python ints.

Java `int` arithmetic wraps at 32 bits; Python ints do not, so every step that can overflow is
masked with `_UINT32_MASK` and the result is read back as a signed int32 by `to_int32`.

    murmur2(data)            Kafka's Utils.murmur2 (MurmurHash2, 32-bit, seed 0x9747b28c)
    to_positive(n)           Kafka's Utils.toPositive: n & 0x7fffffff (NOT abs)
    java_abs(n)              Kafka's Utils.abs: like Math.abs, but Integer.MIN_VALUE maps to 0
    java_string_hashcode(s)  java.lang.String.hashCode: h = 31*h + c over UTF-16 code units
    java_string_sort_key(s)  a sort key ordering strings like String.compareTo

It also models the iteration order of `java.util.HashMap`/`HashSet` (`java_hashmap_order`,
`JavaHashSetOrder`), because Kafka's sticky assignors break ties by whatever order one yields:

    bucket index   = spread(hashCode) & (capacity - 1),  spread(h) = h ^ (h >>> 16)
    capacity       = 16, doubled whenever size would exceed 0.75 * capacity (it never shrinks)
    iteration      = buckets in ascending index; inside a bucket, insertion order

The model is exact while no bucket holds more than 8 keys (TREEIFY_THRESHOLD): beyond that Java
resizes early or turns the bucket into a red-black tree whose root it moves to the front.
"""
from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)

_UINT32_MASK = 0xFFFFFFFF
_INT32_SIGN_BIT = 0x80000000
_INT32_MIN = -(1 << 31)
POSITIVE_MASK = 0x7FFFFFFF                 # Utils.toPositive

MURMUR2_SEED = 0x9747B28C
MURMUR2_M = 0x5BD1E995                     # mixing multiplier
MURMUR2_R = 24                             # mixing shift
MURMUR2_BLOCK_BYTES = 4

JAVA_STRING_HASH_MULTIPLIER = 31
HASHMAP_DEFAULT_CAPACITY = 16
HASHMAP_LOAD_FACTOR = 0.75


def to_int32(n: int) -> int:
    """Reads the low 32 bits of `n` as a Java (two's complement) int."""
    n &= _UINT32_MASK
    return n - (1 << 32) if n & _INT32_SIGN_BIT else n


def _mul32(a: int, b: int) -> int:
    return (a * b) & _UINT32_MASK


def _murmur2_mix_block(h: int, k: int) -> int:
    k = _mul32(k, MURMUR2_M)
    k ^= k >> MURMUR2_R
    k = _mul32(k, MURMUR2_M)
    return _mul32(h, MURMUR2_M) ^ k


def _murmur2_tail(h: int, tail: bytes) -> int:
    """The switch with fall-through: case 3, then 2, then 1 (which also multiplies)."""
    if len(tail) >= 3:
        h ^= tail[2] << 16
    if len(tail) >= 2:
        h ^= tail[1] << 8
    if len(tail) >= 1:
        h ^= tail[0]
        h = _mul32(h, MURMUR2_M)
    return h


def murmur2(data: bytes) -> int:
    """Kafka's Utils.murmur2 of `data`, as a signed int32 (what Java returns)."""
    length = len(data)
    h = (MURMUR2_SEED ^ length) & _UINT32_MASK
    whole_blocks_end = length - length % MURMUR2_BLOCK_BYTES
    for i in range(0, whole_blocks_end, MURMUR2_BLOCK_BYTES):
        k = int.from_bytes(data[i:i + MURMUR2_BLOCK_BYTES], "little")
        h = _murmur2_mix_block(h, k)
    h = _murmur2_tail(h, data[whole_blocks_end:])
    h ^= h >> 13
    h = _mul32(h, MURMUR2_M)
    h ^= h >> 15
    return to_int32(h)


def to_positive(n: int) -> int:
    """Kafka's Utils.toPositive: clears the sign bit. For a negative int this is not abs(n)."""
    return n & POSITIVE_MASK


def java_abs(n: int) -> int:
    """Kafka's Utils.abs: abs of an int32, except Integer.MIN_VALUE, which maps to 0."""
    n = to_int32(n)
    return 0 if n == _INT32_MIN else abs(n)


def java_string_hashcode(s: str) -> int:
    """java.lang.String.hashCode: computed over UTF-16 code units, wrapping at 32 bits."""
    units = s.encode("utf-16-be")
    h = 0
    for i in range(0, len(units), 2):
        h = (JAVA_STRING_HASH_MULTIPLIER * h + (units[i] << 8 | units[i + 1])) & _UINT32_MASK
    return to_int32(h)


def java_string_sort_key(s: str) -> bytes:
    """A key that sorts strings like Java's String.compareTo (by UTF-16 code unit, not code point)."""
    return s.encode("utf-16-be")


def java_hashmap_capacity(max_size: int) -> int:
    """Table length of a default HashMap that has held at most `max_size` entries at once."""
    capacity = HASHMAP_DEFAULT_CAPACITY
    while max_size > capacity * HASHMAP_LOAD_FACTOR:
        capacity *= 2
    return capacity


def java_hashmap_bucket(hash_code: int, capacity: int) -> int:
    """HashMap's bucket index: the hash with its high half folded into the low half, masked."""
    h = hash_code & _UINT32_MASK
    return (h ^ (h >> 16)) & (capacity - 1)


def java_hashmap_order(keys: Iterable[K], hash_code: Callable[[K], int]) -> list[K]:
    """The order a `new HashMap<>()` iterates `keys` when they were put in the order given."""
    ordered = list(keys)
    capacity = java_hashmap_capacity(len(ordered))
    position = {key: i for i, key in enumerate(ordered)}
    return sorted(ordered, key=lambda key: (java_hashmap_bucket(hash_code(key), capacity), position[key]))


class JavaHashSetOrder(Generic[K]):
    """A set that also knows which element a `java.util.HashSet` with the same history yields first.

    Java never shrinks a HashMap's table, and a key re-added after removal goes to the end of its
    bucket, so the model keeps the largest size ever reached and a sequence number per insertion.
    """

    def __init__(self, hash_code: Callable[[K], int]) -> None:
        self._hash_code = hash_code
        self._inserted_at: dict[K, int] = {}
        self._insertions = 0
        self._max_size = 0

    def add(self, key: K) -> None:
        if key in self._inserted_at:
            return
        self._inserted_at[key] = self._insertions
        self._insertions += 1
        self._max_size = max(self._max_size, len(self._inserted_at))

    def remove(self, key: K) -> None:
        del self._inserted_at[key]

    def __contains__(self, key: object) -> bool:
        return key in self._inserted_at

    def __len__(self) -> int:
        return len(self._inserted_at)

    def in_java_order(self) -> list[K]:
        """The elements in the order Java's iterator yields them."""
        capacity = java_hashmap_capacity(self._max_size)
        return sorted(self._inserted_at, key=lambda key: self._java_position(key, capacity))

    def first(self) -> K:
        """What `iterator().next()` returns in Java. Raises ValueError when empty."""
        capacity = java_hashmap_capacity(self._max_size)
        return min(self._inserted_at, key=lambda key: self._java_position(key, capacity))

    def _java_position(self, key: K, capacity: int) -> tuple[int, int]:
        return java_hashmap_bucket(self._hash_code(key), capacity), self._inserted_at[key]
