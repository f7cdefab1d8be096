"""The producer picks partitions like the Java client: explicit, then key hash, then sticky."""
from __future__ import annotations

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.partitioner.default import murmur2 as kafka_python_murmur2

from engine.clients.partitioner import (
    RoundRobinPartitioner,
    StickyPartitioner,
    choose_partition,
    partition_for_key,
)

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1


class ScriptedRandom(random.Random):
    """A Random whose 32-bit draws are given up front, so a test can name the exact outcome."""

    def __init__(self, draws: list[int]) -> None:
        super().__init__(0)
        self.draws = list(draws)

    def getrandbits(self, k: int) -> int:
        assert k == 32
        return self.draws.pop(0) & 0xFFFFFFFF


def _expected_uniform_pick(seed: int, choices: list[int]) -> int:
    draw = random.Random(seed).getrandbits(32) & 0x7FFFFFFF
    return choices[draw % len(choices)]


def test_foobar_goes_to_partition_0_of_6_not_2() -> None:
    assert partition_for_key(b"foobar", 6) == 0


@given(st.binary(max_size=40), st.integers(min_value=1, max_value=1000))
def test_key_partition_matches_kafka_python(key: bytes, num_partitions: int) -> None:
    expected = (kafka_python_murmur2(key) & 0x7FFFFFFF) % num_partitions
    assert partition_for_key(key, num_partitions) == expected


def test_it_rejects_a_topic_without_partitions() -> None:
    with pytest.raises(ValueError):
        partition_for_key(b"k", 0)


def test_an_explicit_partition_beats_the_key() -> None:
    sticky = StickyPartitioner(random.Random(1))
    assert choose_partition(range(6), b"foobar", 4, null_key_partitioner=sticky) == 4


def test_the_key_hash_spans_all_partitions_even_unavailable_ones() -> None:
    sticky = StickyPartitioner(random.Random(1))
    chosen = choose_partition(range(6), b"foobar", null_key_partitioner=sticky, available_partitions=[3, 5])
    assert chosen == 0
    assert sticky.current_partition is None          # the sticky partitioner was not consulted


def test_a_null_key_goes_to_the_null_key_partitioner() -> None:
    sticky = StickyPartitioner(random.Random(7))
    chosen = choose_partition(range(6), None, null_key_partitioner=sticky, available_partitions=[1, 4])
    assert chosen == _expected_uniform_pick(7, [1, 4])


def test_ignore_keys_treats_keyed_records_as_unkeyed() -> None:
    sticky = StickyPartitioner(random.Random(7))
    chosen = choose_partition(range(6), b"foobar", null_key_partitioner=sticky, ignore_keys=True)
    assert chosen == _expected_uniform_pick(7, list(range(6)))


@pytest.mark.parametrize("partition", [-1, 6])
def test_an_explicit_partition_outside_the_topic_fails(partition: int) -> None:
    with pytest.raises(ValueError):
        choose_partition(range(6), None, partition, null_key_partitioner=RoundRobinPartitioner(random.Random(1)))


def test_sticky_stays_until_batch_size_bytes_then_draws_again() -> None:
    sticky = StickyPartitioner(ScriptedRandom([2, 5]), batch_size=100)
    partitions = list(range(6))
    for _ in range(3):
        assert sticky.partition(partitions, 6) == 2
        sticky.on_append(30, partitions, 6)
    assert sticky.partition(partitions, 6) == 2       # 90 bytes so far
    sticky.on_append(30, partitions, 6)               # 120 >= 100: switch
    assert sticky.partition(partitions, 6) == 5
    assert sticky.produced_bytes == 0


def test_sticky_may_draw_the_same_partition_again() -> None:
    sticky = StickyPartitioner(ScriptedRandom([3, 3 + 6]), batch_size=10)
    assert sticky.partition(range(6), 6) == 3
    sticky.on_append(10, range(6), 6)
    assert sticky.partition(range(6), 6) == 3         # Kafka 3.3+ does not exclude the old one


def test_a_disabled_switch_still_happens_at_twice_batch_size() -> None:
    sticky = StickyPartitioner(ScriptedRandom([0, 1]), batch_size=100)
    sticky.partition(range(2), 2)
    sticky.on_append(150, range(2), 2, enable_switch=False)
    assert sticky.partition(range(2), 2) == 0
    sticky.on_append(50, range(2), 2, enable_switch=False)
    assert sticky.partition(range(2), 2) == 1


def test_sticky_draws_only_among_available_partitions() -> None:
    sticky = StickyPartitioner(random.Random(3), batch_size=1)
    seen = set()
    for _ in range(50):
        seen.add(sticky.partition([1, 4], 6))
        sticky.on_append(1, [1, 4], 6)
    assert seen == {1, 4}


def test_with_no_available_partition_sticky_picks_among_all() -> None:
    sticky = StickyPartitioner(ScriptedRandom([9]))
    assert sticky.partition([], 4) == 9 % 4


def test_the_same_seed_gives_the_same_partitions() -> None:
    def run(seed: int) -> list[int]:
        sticky = StickyPartitioner(random.Random(seed), batch_size=3)
        chosen = []
        for _ in range(40):
            chosen.append(sticky.partition(range(12), 12))
            sticky.on_append(1, range(12), 12)
        return chosen

    assert run(11) == run(11)


def test_adaptive_partitioning_weights_by_inverse_queue_size() -> None:
    # Kafka's example: queue sizes 0 3 1 -> weights 4 1 3 -> cumulative 4 5 8
    draws = [0, 3, 4, 5, 7, 8]
    sticky = StickyPartitioner(ScriptedRandom(draws + [0]), batch_size=1)
    sticky.update_partition_load_stats([0, 3, 1], [10, 11, 12])
    chosen = []
    for _ in draws:
        chosen.append(sticky.partition(range(13), 13))
        sticky.on_append(1, range(13), 13)
    assert chosen == [10, 10, 11, 12, 12, 10]


def test_equal_queues_fall_back_to_uniform() -> None:
    sticky = StickyPartitioner(ScriptedRandom([4]))
    sticky.update_partition_load_stats([2, 2, 2], [0, 1, 2])
    assert sticky.partition([0, 1, 2], 3) == 4 % 3


def test_round_robin_counts_from_a_random_start() -> None:
    rr = RoundRobinPartitioner(ScriptedRandom([7]))
    assert [rr.partition([0, 1, 2], 3) for _ in range(4)] == [1, 2, 0, 1]


def test_round_robin_counter_wraps_like_a_java_int() -> None:
    rr = RoundRobinPartitioner(ScriptedRandom([INT32_MAX]))
    # MAX_VALUE % 5 == 2, then MIN_VALUE & 0x7fffffff == 0, then 1
    assert [rr.partition(range(5), 5) for _ in range(3)] == [2, 0, 1]


def test_round_robin_uses_available_partitions_in_metadata_order() -> None:
    rr = RoundRobinPartitioner(ScriptedRandom([0]))
    assert [rr.partition([4, 2], 6) for _ in range(3)] == [4, 2, 4]
    assert RoundRobinPartitioner(ScriptedRandom([INT32_MIN + 3])).partition([], 5) == 3
