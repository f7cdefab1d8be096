"""Which `__consumer_offsets` partition, and so which broker, coordinates a consumer group.

    partition = Utils.abs(groupId.hashCode()) % offsets.topic.num.partitions

`hashCode` is Java's String.hashCode (UTF-16 code units, int32 wraparound) and `Utils.abs` maps
Integer.MIN_VALUE to 0, so the result is always in [0, num_partitions). The leader of that
partition is the group's coordinator. Example: "test-group" hashes to 627841412, partition 12.
"""
from __future__ import annotations

from engine.common.hashing import java_abs, java_string_hashcode

OFFSETS_TOPIC_NUM_PARTITIONS_DEFAULT = 50     # offsets.topic.num.partitions


def coordinator_partition(group_id: str, num_partitions: int = OFFSETS_TOPIC_NUM_PARTITIONS_DEFAULT) -> int:
    """The `__consumer_offsets` partition whose leader coordinates `group_id`."""
    if num_partitions < 1:
        raise ValueError(f"num_partitions must be >= 1 but got {num_partitions}")
    return java_abs(java_string_hashcode(group_id)) % num_partitions
