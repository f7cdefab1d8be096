"""Consumer groups: where a group's coordinator lives, how the group runs, how members split partitions.

coordinator_partition.py and the assignors/ package are pure functions and classes that match the
Java client bit for bit.
"""
