"""Where a consumer application puts what it processed: the "database" of the delivery lessons.

- `ListSink` appends every record it is given, so a record processed twice is there twice
  (what at-least-once delivery does to a plain sink);
- `IdempotentSink` is keyed by (topic, partition, offset): writing a record again changes
  nothing, so at-least-once delivery into it has an exactly-once *effect*.
Both remember the duplicates they were offered, for the lesson to show.

Sinks are shared by name within a cluster (`sink_for(cluster.sinks, "db")`: the facade keeps
them), as several consumers of one group write into the same database.
"""
from __future__ import annotations

from engine.clients.consumer_state import ConsumedRecord

Key = tuple[str, int, int]


class ListSink:
    kind = "list"

    def __init__(self, name: str = "sink") -> None:
        self.name = name
        self.rows: list[dict] = []
        self.duplicates: list[dict] = []
        self._seen: set[Key] = set()

    def write(self, record: ConsumedRecord, by: str = "") -> bool:
        """Store `record`; returns False if it had been written before."""
        key = (record.topic, record.partition, record.offset)
        row = {**record.to_dict(), "by": by}
        fresh = key not in self._seen
        if not fresh:
            self.duplicates.append(row)
        self._seen.add(key)
        self._store(key, row, fresh)
        return fresh

    def _store(self, key: Key, row: dict, fresh: bool) -> None:
        self.rows.append(row)

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind, "rows": list(self.rows), "duplicates": list(self.duplicates)}


class IdempotentSink(ListSink):
    kind = "idempotent"

    def _store(self, key: Key, row: dict, fresh: bool) -> None:
        if fresh:
            self.rows.append(row)


SINK_KINDS = {ListSink.kind: ListSink, IdempotentSink.kind: IdempotentSink}


def sink_for(sinks: dict[str, ListSink], name: str, kind: str = "list") -> ListSink:
    """The sink called `name` among `sinks` (a cluster's: `Cluster.sinks`), created (of `kind`) on first use."""
    if name not in sinks:
        if kind not in SINK_KINDS:
            raise ValueError(f"sink kind must be one of {', '.join(SINK_KINDS)}, not {kind!r}")
        sinks[name] = SINK_KINDS[kind](name)
    return sinks[name]
