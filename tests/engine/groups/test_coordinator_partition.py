"""A group's coordinator partition is Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.groups.coordinator_partition import coordinator_partition


@pytest.mark.parametrize(("group_id", "expected"), [
    ("test-group", 12),            # hashCode 627841412
    ("my-group", 12),              # hashCode -1906497762
    ("", 0),
    ("polygenelubricants", 0),     # hashCode is Integer.MIN_VALUE; Utils.abs maps it to 0
])
def test_it_matches_kafka_for_known_group_ids(group_id: str, expected: int) -> None:
    assert coordinator_partition(group_id) == expected


def test_it_uses_the_configured_partition_count() -> None:
    assert coordinator_partition("test-group", 10) == 627841412 % 10
    assert coordinator_partition("my-group", 7) == 1906497762 % 7


@given(st.text(max_size=30), st.integers(min_value=1, max_value=500))
def test_it_always_lands_inside_the_offsets_topic(group_id: str, num_partitions: int) -> None:
    assert 0 <= coordinator_partition(group_id, num_partitions) < num_partitions


def test_it_rejects_an_offsets_topic_without_partitions() -> None:
    with pytest.raises(ValueError):
        coordinator_partition("g", 0)
