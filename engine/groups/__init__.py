"""Consumer groups: where a group's coordinator lives and how its members split partitions.

Pure functions and classes only; the group coordinator's state machine lives elsewhere.
"""
