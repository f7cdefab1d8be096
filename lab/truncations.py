"""What truncations removed, and what became of each removed record — the model's `truncations`.

A follower that truncates its log removes records; whether they are *lost* is another question.
In the notes' high-watermark story, broker 1 comes back, truncates to its HW (4) and so removes
m5 and m6 — then fetches m5 back from the new leader at the same offset: m5 was never lost, m6
was (the new leader holds m6' there). So each removed record gets a fate, kept current as the
partition changes:
- `refetched`: the replica's own log holds the same record at that offset again;
- `kept`: not (yet) on the replica, but the partition's leader holds it there: it is still in the
  partition and the follower will copy it back;
- `lost`: neither does — `now` says what holds that offset instead, if anything;
- `expired`: the offset has since gone below the log start (retention), so nobody can tell.
"The same record" is the same key, value and batch leader epoch: a leader stamps its epoch on
every batch it appends and followers copy batches byte for byte, so a record fetched back keeps
its epoch, while a different record written at that offset by a later leader has a later epoch
(KIP-101: two leaders never assign the same offset in one epoch). The removed records' epochs are
not in the log_truncated event: the journal keeps each replica's leader-epoch cache as it was
before the cut (refreshed as appends move it) and reads them from there.

The journal follows the session's line of time, not one cluster object: a rewind replaces the
cluster (a replay, or a checkpoint restored), and the new tracker `adopt`s the old journal.
Entries are keyed by event number; the model shows those before the cluster's next event number.
When an event arrives at the number of a kept entry and is not that truncation, the line of time
has changed there (a command cut the future): that entry and every later one go.
"""
from __future__ import annotations

from typing import Any

from engine import events as ev
from engine.cluster import Cluster

SHOWN = 20                 # learner's truncations in the model (the newest)
SHOWN_INTERNAL = 5         # and __consumer_offsets ones
KEPT = 400                 # entries kept in the journal
REMOVED_KEPT = 50          # removed records followed per truncation (the count says how many there were)
TEXT_MAX = 40

Key = tuple[int, str, int]   # (broker, topic, partition)


def _text(value: Any) -> Any:
    if isinstance(value, str) and len(value) > TEXT_MAX:
        return value[:TEXT_MAX - 1] + "…"
    return value


def _epoch_at(entries: list[tuple[int, int]] | None, offset: int) -> int | None:
    """The leader epoch of the batch holding `offset`, from a leader-epoch cache ([(epoch, start)])."""
    epoch = None
    for e, start in entries or ():
        if start > offset:
            break
        epoch = e
    return epoch


class TruncationJournal:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.entries: dict[int, dict] = {}          # event seq -> entry (in seq order)
        self._fates: dict[int, list[dict]] = {}     # event seq -> each removed record's fate, as last computed
        self._epochs: dict[Key, list[tuple[int, int]]] = {}
        for broker in cluster.brokers.values():
            self._snapshot_broker(broker.id)

    def adopt(self, older: TruncationJournal) -> None:
        """Carry on the line of time `older` followed (this cluster replaced its cluster)."""
        self.entries = dict(older.entries)

    # -- events ----------------------------------------------------------------------------------
    def on_event(self, event: ev.Event) -> None:
        if self.entries and event.seq <= next(reversed(self.entries)):
            kept = self.entries.get(event.seq)
            if kept is not None and not _same_truncation(kept, event):
                for seq in [s for s in self.entries if s >= event.seq]:
                    del self.entries[seq]
                    self._fates.pop(seq, None)
        kind = event.kind
        if kind == "records_appended":
            key = (event.broker, event.topic, event.partition)
            snapshot = self._epochs.get(key)
            if not snapshot or snapshot[-1][0] != event.leader_epoch:
                self._snapshot(key)
        elif kind == "log_truncated":
            key = (event.broker, event.topic, event.partition)
            if event.seq not in self.entries:
                self._add(event, self._epochs.get(key))
            self._snapshot(key)
        elif kind == "broker_started":
            self._snapshot_broker(event.broker)

    def _add(self, event: ev.LogTruncated, epochs: list[tuple[int, int]] | None) -> None:
        removed = [{"offset": r["offset"], "key": r["key"], "value": r["value"],
                    "epoch": _epoch_at(epochs, r["offset"])} for r in event.removed[:REMOVED_KEPT]]
        self.entries[event.seq] = {
            "seq": event.seq, "time_ms": event.time_ms, "step": event.step, "broker": event.broker,
            "topic": event.topic, "partition": event.partition, "from_offset": event.from_offset,
            "to_offset": event.to_offset, "reason": event.reason, "records_removed": event.records_removed,
            "internal": event.topic.startswith("__"), "removed": removed}
        if len(self.entries) > 1 and event.seq < max(self.entries):   # a journal adopted from elsewhere
            self.entries = dict(sorted(self.entries.items()))
        if len(self.entries) > KEPT:
            oldest = next(iter(self.entries))
            del self.entries[oldest]
            self._fates.pop(oldest, None)

    def _snapshot(self, key: Key) -> None:
        broker_id, topic, p = key
        broker = self.cluster.brokers.get(broker_id)
        part = broker.partitions.get((topic, p)) if broker is not None else None
        if part is not None:
            self._epochs[key] = list(part.epoch_cache.entries)

    def _snapshot_broker(self, broker_id: int) -> None:
        broker = self.cluster.brokers.get(broker_id)
        if broker is None:
            return   # an event of the cluster replacing this one (a reset builds it while we listen)
        for (topic, p), part in broker.partitions.items():
            self._epochs[(broker_id, topic, p)] = list(part.epoch_cache.entries)
        for (topic, p), offline in broker.offline_replicas.items():
            self._epochs[(broker_id, topic, p)] = [tuple(e) for e in offline.get("leader_epoch_cache", [])]

    # -- the section -----------------------------------------------------------------------------
    def section(self, dirty: set[tuple[str, int]] | None) -> list[dict]:
        """The newest truncations of this moment, each removed record with its fate. Fates are
        computed again for partitions in `dirty` (None: all)."""
        now_seq = self.cluster.bus.count
        past = [e for seq, e in self.entries.items() if seq < now_seq]
        shown = [e for e in past if not e["internal"]][-SHOWN:] + [e for e in past if e["internal"]][-SHOWN_INTERNAL:]
        out = []
        for entry in sorted(shown, key=lambda e: e["seq"]):
            fates = self._fates.get(entry["seq"])
            if fates is None or dirty is None or (entry["topic"], entry["partition"]) in dirty:
                fates = self._fates[entry["seq"]] = self._fates_of(entry)
            out.append(_shown(entry, fates))
        return out

    def _fates_of(self, entry: dict) -> list[dict]:
        topic, p, broker_id = entry["topic"], entry["partition"], entry["broker"]
        own = self._live(broker_id, topic, p)
        leader = self._leader(topic, p)
        leader_part = self._live(leader, topic, p) if leader != broker_id else None
        out = []
        for r in entry["removed"]:
            here = _record_at(own, r["offset"])
            there = _record_at(leader_part, r["offset"])
            if _same(r, here):
                fate = {"fate": "refetched"}
            elif _same(r, there):
                fate = {"fate": "kept"}
            elif own is not None and r["offset"] < own.log.log_start_offset:
                fate = {"fate": "expired"}
            else:
                holder = here if here is not None else there
                fate = {"fate": "lost", "now": None if holder is None else
                        {"key": _text(holder["key"]), "value": _text(holder["value"])}}
            out.append(fate)
        return out

    def _live(self, broker_id: int, topic: str, p: int) -> Any:
        broker = self.cluster.brokers.get(broker_id)
        return broker.partitions.get((topic, p)) if broker is not None and broker.alive else None

    def _leader(self, topic: str, p: int) -> int:
        state = self.cluster.metadata.partition_state(topic, p)
        return state["leader"] if state is not None else -1


def _record_at(part: Any, offset: int) -> dict | None:
    """The record a live replica holds at `offset` (key, value, batch epoch), or None."""
    if part is None or not part.log.log_start_offset <= offset < part.log_end_offset:
        return None
    for record in part.log.read(offset, 1):
        if record.offset == offset:
            return {"key": ev.text(record.key), "value": ev.text(record.value),
                    "epoch": _epoch_at(part.epoch_cache.entries, offset)}
    return None


def _same(removed: dict, held: dict | None) -> bool:
    if held is None or removed["key"] != held["key"] or removed["value"] != held["value"]:
        return False
    return removed["epoch"] is None or held["epoch"] is None or removed["epoch"] == held["epoch"]


def _same_truncation(entry: dict, event: ev.Event) -> bool:
    return event.kind == "log_truncated" and all(
        entry[k] == getattr(event, k) for k in ("broker", "topic", "partition", "from_offset", "to_offset"))


def _shown(entry: dict, fates: list[dict]) -> dict:
    removed = [{"offset": r["offset"], "key": _text(r["key"]), "value": _text(r["value"]), **fate}
               for r, fate in zip(entry["removed"], fates)]
    counts = {name: sum(1 for f in fates if f["fate"] == name) for name in ("lost", "refetched", "kept", "expired")}
    return {**{k: v for k, v in entry.items() if k != "removed"}, "removed": removed, **counts}
