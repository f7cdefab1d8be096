"""What a broker, the facade and the lab read about the cluster's metadata, in either metadata mode.

Kafka keeps the same facts in two places, depending on the mode a cluster runs in:
- ZooKeeper mode: znodes (engine/metadata/zk.py). Every reader asks the store, which is the truth.
- KRaft mode (KIP-500/631): records in the `__cluster_metadata` log, replayed by each node into its
  own image (engine/metadata/image.py, Kafka's MetadataImage). A broker's image is only as new as
  the records it has fetched: it may lag the controller's.

Both answer through `MetadataReader`, so a broker's request handlers, the group coordinator and the
lab's views read the same way in both modes; only who writes, and how, differs.

`partition_state` has the fields of ZooKeeper's partition state node (`leader`, `leader_epoch`,
`isr`, `replicas`) in both modes; KRaft's image adds `partition_epoch`, `adding_replicas` and
`removing_replicas`.
"""
from __future__ import annotations

from typing import Protocol

from engine.metadata import zk
from engine.metadata.store import MetadataStore
from engine.metadata.zk import TopicInfo


class MetadataReader(Protocol):
    """The metadata as one reader sees it (Kafka's MetadataCache, for a broker)."""

    @property
    def version(self) -> int: ...        # moves on every change: a reader may cache until it moves
    def topic_names(self) -> list[str]: ...          # in creation order
    def topic_exists(self, topic: str) -> bool: ...
    def read_topic(self, topic: str) -> TopicInfo | None: ...
    def partition_count(self, topic: str) -> int: ...
    def assignment(self, topic: str) -> list[list[int]]: ...
    def topic_config(self, topic: str) -> dict: ...
    def partition_state(self, topic: str, partition: int) -> dict | None: ...   # shared: read only
    def registrations(self) -> dict[int, int]: ...   # live (KRaft: registered and unfenced) broker -> incarnation
    def controller_id(self) -> int: ...
    def controller_epoch(self) -> int: ...
    def broker_racks(self) -> dict[int, str]: ...     # live broker -> its broker.rack, for those with one


def all_partitions(reader: MetadataReader) -> list[tuple[str, int]]:
    """Every partition of every topic, topics in creation order."""
    return [(t, p) for t in reader.topic_names() for p in range(reader.partition_count(t))]


class ZkMetadata:
    """ZooKeeper mode: every read goes to the store (the lab's brokers read ZooKeeper directly
    where Kafka's cache it from UpdateMetadata requests)."""

    def __init__(self, store: MetadataStore) -> None:
        self.store = store

    @property
    def version(self) -> int:
        return self.store.zxid

    def topic_names(self) -> list[str]:
        return zk.topic_names(self.store)

    def topic_exists(self, topic: str) -> bool:
        return zk.topic_exists(self.store, topic)

    def read_topic(self, topic: str) -> TopicInfo | None:
        return zk.read_topic(self.store, topic)

    def partition_count(self, topic: str) -> int:
        return zk.partition_count(self.store, topic)

    def assignment(self, topic: str) -> list[list[int]]:
        return zk.assignment(self.store, topic)

    def topic_config(self, topic: str) -> dict:
        return zk.topic_config(self.store, topic)

    def partition_state(self, topic: str, partition: int) -> dict | None:
        return zk.partition_state(self.store, topic, partition)

    def registrations(self) -> dict[int, int]:
        return zk.registrations(self.store)

    def controller_id(self) -> int:
        return zk.controller_id(self.store)

    def controller_epoch(self) -> int:
        return zk.controller_epoch(self.store)

    def broker_racks(self) -> dict[int, str]:
        return zk.broker_racks(self.store)


class Topics:
    """The topic registry as a read-only mapping, name -> TopicInfo, read through from a reader.

    Decoded again only after the metadata changed (its version moved), so a reader may ask on
    every step (the facade's `is_idle`). Iteration is in creation order."""

    def __init__(self, reader: MetadataReader) -> None:
        self._reader = reader
        self._version = -1
        self._topics: dict[str, TopicInfo] = {}

    def _current(self) -> dict[str, TopicInfo]:
        version = self._reader.version
        if self._version != version:
            self._topics = {t: info for t in self._reader.topic_names()
                            if (info := self._reader.read_topic(t)) is not None}
            self._version = version
        return self._topics

    def __getitem__(self, topic: str) -> TopicInfo:
        return self._current()[topic]

    def get(self, topic: str, default: TopicInfo | None = None) -> TopicInfo | None:
        return self._current().get(topic, default)

    def __contains__(self, topic: object) -> bool:
        return topic in self._current()

    def __iter__(self):
        return iter(list(self._current()))

    def __len__(self) -> int:
        return len(self._current())

    def keys(self) -> list[str]:
        return list(self._current())

    def values(self) -> list[TopicInfo]:
        return list(self._current().values())

    def items(self) -> list[tuple[str, TopicInfo]]:
        return list(self._current().items())
