"""The client-side partition assignors a consumer group leader can run, by protocol name.

Each is a `PartitionAssignor` (see types.py for the contract) with one module of its own:
range.py, roundrobin.py, sticky.py, cooperative_sticky.py.
"""
from __future__ import annotations

from engine.groups.assignors.cooperative_sticky import CooperativeStickyAssignor, withheld_partitions
from engine.groups.assignors.range import RangeAssignor
from engine.groups.assignors.roundrobin import RoundRobinAssignor
from engine.groups.assignors.sticky import StickyAssignor
from engine.groups.assignors.types import Assignment, PartitionAssignor, Subscription, TopicPartition

ASSIGNORS: dict[str, PartitionAssignor] = {
    RangeAssignor.name: RangeAssignor(),
    RoundRobinAssignor.name: RoundRobinAssignor(),
    StickyAssignor.name: StickyAssignor(),
    CooperativeStickyAssignor.name: CooperativeStickyAssignor(),
}

__all__ = [
    "ASSIGNORS",
    "Assignment",
    "CooperativeStickyAssignor",
    "PartitionAssignor",
    "RangeAssignor",
    "RoundRobinAssignor",
    "StickyAssignor",
    "Subscription",
    "TopicPartition",
    "withheld_partitions",
]
