"""The lab's picture of a cluster — the `model` of docs/lab-protocol.md — and its patches.

The browser draws this model and nothing else: brokers, the controller, links, topics, every
partition's leader, epoch, ISR and high watermark, every replica's log start, log end, high
watermark and newest records, consumer groups and consumers. The engine decides all of it; the
page never folds events into state (events only animate and fill the log). So the page cannot
drift from the engine: after every frame its model *is* the engine's state at that step.

`ModelTracker` keeps, for one cluster, a mirror of what the browsers were last sent, and answers:
- `full()`: the whole model (a `hello` or a `state`), and
- `patch()`: what changed since the last call — top-level sections replaced whole when they
  changed, and partitions replaced one by one — or None when nothing did.

It learns which partitions may have changed from the events it is shown (`on_event`; every state
change in the engine is an event), and, as a safety net, compares every partition with the mirror
every FULL_CHECK_EVERY patches: a difference found then is sent all the same, and counted in
`repairs` (an engine change without its event — a bug to fix, not to hide).

Records. Each replica carries its newest RECORDS_PER_REPLICA records as `[offset, key, value]`
(text cut to TEXT_MAX characters: they are labels) with `records_from`: the browser drops what it
holds at or above `records_from`, adds the records, and keeps only offsets in
[log_start_offset, log_end_offset). A patch sends only what the browser lacks (a truncation makes
it resend from the cut). Records come from a cache fed by `records_appended` events, and from the
log itself where an event carried none (appends of many records).

A replica on a broker that is down keeps what its log holds on disk (engine `offline_replicas`):
`alive: false` with its last log end, high watermark and records — never zeros.

Two sections explain rather than show: `timers` (engine.timers: what the cluster is waiting for,
with when — recomputed for every patch, sent when it changed) and `truncations` (lab.truncations:
the recent log truncations of this line of time, each removed record lost, refetched or still on
the leader — kept in step as the partition changes; a tracker that replaces another after a
rewind `adopt`s its journal).

The metadata layer (lab.metadata_view): `metadata` (ZooKeeper's znodes and controller, or the KRaft
quorum's voters, active controller and each broker's metadata offset, epoch and fencing),
`metadata_records` (KRaft's newest committed `__cluster_metadata` records, Kafka's JSON of each) and
`controller_nodes` (KRaft's dedicated controllers, drawn beside the brokers; never `clients`).
"""
from __future__ import annotations

from typing import Any

from engine import events as ev
from engine.cluster import Cluster
from engine.inspect.groups import describe_groups
from engine.storage.log import Log
from engine.timers import pending_timers
from lab.metadata_view import MetadataView
from lab.truncations import TruncationJournal

RECORDS_PER_REPLICA = 32
RECORDS_CACHED = 256         # per replica, newest offsets (the cache is trimmed past twice this)
TEXT_MAX = 40
FULL_CHECK_EVERY = 40        # patches between two full comparisons with the mirror

_PARTITION_KINDS = frozenset({
    "records_appended", "high_watermark_advanced", "log_truncated", "log_start_offset_moved", "leader_elected",
    "partition_offline", "leader_and_isr_applied", "isr_shrunk", "isr_expanded", "log_cleaned"})
_EVERYTHING_KINDS = frozenset({"broker_started", "broker_crashed", "broker_session_expired", "controller_elected",
                               "topic_created", "partitions_added", "topic_deletion_started", "topic_deleted",
                               "replica_deleted", "reassignment_started", "reassignment_step",
                               "reassignment_completed"})
_BROKER_KINDS = frozenset({"fault_injected"})


def label(topic: str, partition: int) -> str:
    return f"{topic}-{partition}"


def _text(value: Any) -> Any:
    if isinstance(value, str) and len(value) > TEXT_MAX:
        return value[:TEXT_MAX - 1] + "…"
    return value


class ModelTracker:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.repairs = 0
        self._mirror: dict[str, Any] = {}                 # section -> value, as last sent
        self._mirror_partitions: dict[str, dict] = {}     # label -> entry without records
        self._dirty: set[tuple[str, int]] = set()
        self._dirty_all = True
        self._groups_dirty = True
        self._records: dict[tuple[int, str, int], dict[int, tuple]] = {}   # (broker, topic, p) -> offset -> (key, value)
        self._missing_from: dict[tuple[int, str, int], int] = {}          # cache holes from this offset up
        self._cache_end: dict[tuple[int, str, int], int] = {}             # one past the newest offset cached
        self._valid_to: dict[tuple[int, str, int], int] = {}              # the browsers hold correct records below this
        self._held_from: dict[tuple[int, str, int], int] = {}             # ...and none below this
        self._patches = 0
        self._last_known: dict[str, dict] = {}   # group -> its last description with a live coordinator
        self.truncations = TruncationJournal(cluster)
        self.metadata = MetadataView(cluster)

    def adopt(self, older: ModelTracker) -> None:
        """This tracker follows a cluster that replaced `older`'s on the same line of time (a
        rewind's replay or restored checkpoint): carry on its truncation journal."""
        self.truncations.adopt(older.truncations)

    # -- events -----------------------------------------------------------------------------------
    def on_event(self, event: ev.Event) -> None:
        self.truncations.on_event(event)
        kind = event.kind
        if kind in _PARTITION_KINDS:
            key = (event.topic, event.partition)
            self._dirty.add(key)
            if kind == "records_appended":
                self._cache_append(event)
            elif kind == "log_truncated":
                self._cache_cut((event.broker, event.topic, event.partition), event.to_offset)
            elif kind == "log_cleaned":
                self._cache_cleaned((event.broker, event.topic, event.partition), event.end_offset)
            elif kind == "log_start_offset_moved":
                cache = self._records.get((event.broker, event.topic, event.partition))
                if cache:
                    for offset in [o for o in cache if o < event.log_start_offset]:
                        del cache[offset]
            if kind == "high_watermark_advanced":
                self._groups_dirty = True
        elif kind in _EVERYTHING_KINDS or kind in _BROKER_KINDS:
            self._dirty_all = True
            self._groups_dirty = True
        elif event.kind.startswith(("group_", "member_", "rebalance_", "offsets_", "coordinator_", "consumer_",
                                    "assignment_", "partitions_revoked")):
            self._groups_dirty = True

    def _cache_append(self, event: ev.RecordsAppended) -> None:
        key = (event.broker, event.topic, event.partition)
        cache = self._records.setdefault(key, {})
        if self._cache_end.get(key, 0) > event.base_offset:
            self._cache_cut(key, event.base_offset)   # offsets written again (a follower after truncating)
        if event.records or event.records_count == 0:
            for r in event.records:
                cache[r["offset"]] = (_text(r["key"]), _text(r["value"]))
        else:
            self._missing_from.setdefault(key, event.base_offset)
        self._cache_end[key] = event.last_offset + 1
        if len(cache) > 2 * RECORDS_CACHED:
            for offset in sorted(cache)[:-RECORDS_CACHED]:
                del cache[offset]

    def _cache_cleaned(self, key: tuple[int, str, int], end_offset: int) -> None:
        """The log cleaner rewrote everything below `end_offset`: forget those records (they are read
        again from the log, gaps and all) and have the browsers take the whole window again."""
        cache = self._records.get(key)
        if cache:
            for o in [o for o in cache if o < end_offset]:
                del cache[o]
        if key in self._valid_to:
            self._valid_to[key] = 0
            self._held_from[key] = 0

    def _cache_cut(self, key: tuple[int, str, int], offset: int) -> None:
        cache = self._records.get(key)
        if cache:
            for o in [o for o in cache if o >= offset]:
                del cache[o]
        if self._missing_from.get(key, -1) >= offset:
            del self._missing_from[key]
        if self._cache_end.get(key, 0) > offset:
            self._cache_end[key] = offset
        if key in self._valid_to:
            self._valid_to[key] = min(self._valid_to[key], offset)

    def rewound(self) -> None:
        """The cluster moved to another point of its line of time without the browsers seeing it
        (a replay): what they are sent next is a `full(baseline=True)`; what groups showed before a
        coordinator went down belongs to another moment."""
        self._last_known.clear()
        self._dirty_all = self._groups_dirty = True

    # -- the model ----------------------------------------------------------------------------------
    def full(self, records_budget: int | None = None, *, baseline: bool = False) -> dict[str, Any]:
        """The whole model. With `baseline`, every browser is being sent it (a rewind, a reset):
        later patches are relative to it. Without, it is for one browser joining the stream (a
        hello, a resync): the stream is not disturbed — the patches that follow may repeat changes
        the model already shows, which is harmless, as every patch sets values (never adds to them)."""
        sections = self._sections(groups=True, store=baseline, dirty=None)
        partitions = {}
        for topic, p in self.cluster.all_partitions():
            partitions[label(topic, p)] = self._partition(topic, p)
        per_replica = _per_replica(records_budget, partitions)
        for entry in partitions.values():
            for broker, rep in entry["replica_states"].items():
                key = (int(broker), entry["topic"], entry["partition"])
                end, start = rep["log_end_offset"], rep["log_start_offset"]
                rep["records_from"] = 0
                rep["records"] = self._records_between(key, max(start, end - per_replica), end)
        if baseline:
            self._mirror = dict(sections)
            self._mirror_partitions = {name: _without_records(e) for name, e in partitions.items()}
            self._valid_to = {(int(b), e["topic"], e["partition"]): rep["log_end_offset"]
                              for e in partitions.values() for b, rep in e["replica_states"].items()}
            self._held_from = {(int(b), e["topic"], e["partition"]): max(rep["log_start_offset"],
                                                                          rep["log_end_offset"] - per_replica)
                               for e in partitions.values() for b, rep in e["replica_states"].items()}
            self._dirty.clear()
            self._dirty_all = self._groups_dirty = False
        return {**sections, **self._position(), "partitions": partitions}

    def patch(self) -> dict[str, Any] | None:
        """What changed since the last `full()` or `patch()` (None if nothing did). The position
        (step, time, seq) is always current in a non-empty patch."""
        self._patches += 1
        check = self._patches % FULL_CHECK_EVERY == 0
        out: dict[str, Any] = {}
        dirty = None if self._dirty_all or check else self._dirty
        # Groups are described anew every patch (cheap; what they show can change with the clock
        # alone — a rebalance's deadline, a member's session running out — so no event says when).
        for name, value in self._sections(groups=True, dirty=dirty).items():
            if self._mirror.get(name) != value:
                out[name] = value
                self._mirror[name] = value
        everything = self._dirty_all or check
        changed = {}
        for topic, p in (self.cluster.all_partitions() if everything else sorted(self._dirty)):
            info = self.cluster.topics.get(topic)
            if info is None or p >= info.partitions:
                continue
            name = label(topic, p)
            entry = self._partition(topic, p)
            bare = _without_records(entry)
            moved = self._mirror_partitions.get(name) != bare
            if moved and not self._dirty_all and (topic, p) not in self._dirty:
                self.repairs += 1   # changed without an event saying so: see the module docstring
            records = False
            for broker, rep in entry["replica_states"].items():
                records = self._attach_records((int(broker), topic, p), rep) or records
            if moved or records:
                changed[name] = entry
                self._mirror_partitions[name] = bare
        if changed:
            out["partitions"] = changed
        if everything:   # a deleted topic's partitions leave the browsers' model too
            current = {label(t, p) for t, p in self.cluster.all_partitions()}
            removed = sorted(name for name in self._mirror_partitions if name not in current)
            if removed:
                out["partitions_removed"] = [[self._mirror_partitions[n]["topic"], self._mirror_partitions[n]["partition"]]
                                             for n in removed]
                for name in removed:
                    del self._mirror_partitions[name]
        self._dirty.clear()
        self._dirty_all = self._groups_dirty = False
        if not out:
            return None
        return {**self._position(), **out}

    def position(self) -> dict[str, int]:
        return self._position()

    def _position(self) -> dict[str, int]:
        c = self.cluster
        return {"step": c.scheduler.steps, "time_ms": c.now_ms, "seq": c.bus.count}

    # -- sections ---------------------------------------------------------------------------------
    def _sections(self, *, groups: bool, store: bool = True,
                  dirty: set[tuple[str, int]] | None = None) -> dict[str, Any]:
        c = self.cluster
        controller = c.controller_id()
        controller_nodes = {server.node for server in c.controller_nodes.values()}
        out: dict[str, Any] = {
            "controller": controller,
            "brokers": [{"id": b.id, "alive": b.alive, "controller": b.id == controller,
                         "registered": b.is_broker_registered(b.id), "paused_fetcher": b.fetchers_paused,
                         "slow_ms": c.network.slow_ms(b.node), **({"rack": b.rack} if b.rack else {})}
                        for b in c.brokers.values()],
            "links_cut": sorted(list(link) for link in c.network.cut_links()),
            "topics": [{"topic": t.name, "partitions": t.partitions, "replication_factor": t.replication_factor,
                        "config": dict(t.config), "internal": t.name.startswith("__")}
                       for t in c.topics.values()],
            "clients": [n for n in c.network.nodes() if not n.startswith("broker-") and n not in controller_nodes],
            "consumers": _consumers(c),
            "produced_count": len(c.produced) + sum(p.sent_count() for p in c.producers.values()),
            "timers": pending_timers(c),
            "truncations": self.truncations.section(dirty),
            **self.metadata.sections(),
        }
        if groups:
            out["groups"] = self._groups(store)
        else:
            out["groups"] = self._mirror.get("groups", [])
        return out

    def _groups(self, store: bool = True) -> list[dict]:
        """describe_groups, and while a group's coordinator is down or loading, what it last showed."""
        before = {g["group"]: g for g in self._mirror.get("groups", [])}
        before.update(self._last_known)
        out = []
        for group in describe_groups(self.cluster):
            if group["state"] == "Unknown":
                last = before.get(group["group"])
                if last is not None:
                    last = last.get("last_known") or last
                    if last.get("state") != "Unknown":
                        group["last_known"] = {k: last[k] for k in ("generation", "state", "protocol", "members",
                                                                   "committed") if k in last}
            out.append(group)
            if store and group["state"] != "Unknown":
                self._last_known[group["group"]] = group
        return out

    # -- partitions -------------------------------------------------------------------------------
    def _partition(self, topic: str, p: int) -> dict[str, Any]:
        c = self.cluster
        state = c.partition_state(topic, p)
        leader = state["leader"]
        leader_part = c.brokers[leader].partitions.get((topic, p)) if leader >= 0 and leader in c.brokers else None
        replica_states: dict[str, dict] = {}
        for replica in state["replicas"]:
            broker = c.brokers[replica]
            part = broker.partitions.get((topic, p))
            if part is not None:
                replica_states[str(replica)] = {
                    "alive": True, "log_start_offset": part.log.log_start_offset,
                    "log_end_offset": part.log_end_offset, "high_watermark": part.high_watermark,
                    "role": part.role, "leader_epoch_cache": [list(e) for e in part.epoch_cache.entries]}
            else:
                offline = broker.offline_replicas.get((topic, p))
                rep = {"alive": False, "log_start_offset": 0, "log_end_offset": 0, "high_watermark": 0, "role": None,
                       "leader_epoch_cache": [], "on_disk": offline is not None}
                if offline is not None:
                    rep.update({k: offline[k] for k in ("log_start_offset", "log_end_offset", "high_watermark",
                                                        "leader_epoch_cache")})
                    rep["lost_on_crash"] = offline.get("lost_on_crash", 0)
                replica_states[str(replica)] = rep
        return {"topic": topic, "partition": p, "leader": leader, "leader_epoch": state["leader_epoch"],
                "isr": list(state["isr"]), "replicas": list(state["replicas"]),
                "high_watermark": leader_part.high_watermark if leader_part is not None else -1,
                "internal": topic.startswith("__"), "replica_states": replica_states}

    def _attach_records(self, key: tuple[int, str, int], rep: dict) -> bool:
        """Put on `rep` the records the browsers lack; True if any. They hold correct records in
        [held_from, valid_to): a patch sends from where theirs stop being right — or, when a
        truncation brought older offsets back into the newest RECORDS_PER_REPLICA (records the
        browsers had trimmed), the whole window again."""
        end, start = rep["log_end_offset"], rep["log_start_offset"]
        valid = self._valid_to.get(key, 0)
        window = max(start, end - RECORDS_PER_REPLICA)
        held_from = self._held_from.get(key, 0)
        if valid == end and held_from <= window:
            return False
        send_from = max(window, min(valid, end)) if held_from <= window else window
        rep["records_from"] = min(valid, end, send_from)
        rep["records"] = self._records_between(key, send_from, end) if send_from < end else []
        self._valid_to[key], self._held_from[key] = end, window
        return True

    def _records_between(self, key: tuple[int, str, int], start: int, end: int) -> list[list]:
        cache = self._records.setdefault(key, {})
        missing_from = self._missing_from.get(key)
        if any(o not in cache for o in range(start, end)) or (missing_from is not None and missing_from < end):
            self._fill_from_log(key, start, end)
        return [[o, *cache[o]] for o in range(start, end) if o in cache]

    def _fill_from_log(self, key: tuple[int, str, int], start: int, end: int) -> None:
        broker_id, topic, p = key
        broker = self.cluster.brokers[broker_id]
        part = broker.partitions.get((topic, p))
        cache = self._records.setdefault(key, {})
        if part is None:   # a broker that is down: the newest records it keeps on disk
            tail = broker.offline_replicas.get((topic, p), {}).get("tail", [])
            records = [(o, k, v) for o, k, v in tail if start <= o < end]
        else:
            records = [(r.offset, r.key, r.value) for r in _read(part.log, start, end)]
        for offset, k, v in records:
            cache[offset] = (_text(ev.text(k)), _text(ev.text(v)))
        self._missing_from.pop(key, None)


def _read(log: Log, start: int, end: int) -> list:
    start = max(start, log.log_start_offset)
    return [r for r in log.records_from(start) if r.offset < end] if start < end else []


def _without_records(entry: dict) -> dict:
    return {**entry, "replica_states": {b: {k: v for k, v in rep.items() if k not in ("records", "records_from")}
                                        for b, rep in entry["replica_states"].items()}}


def _per_replica(budget: int | None, partitions: dict[str, dict]) -> int:
    if budget is None:
        return RECORDS_PER_REPLICA
    replicas = sum(len(e["replica_states"]) for e in partitions.values()) or 1
    return max(4, min(RECORDS_PER_REPLICA, budget // replicas))


def _consumers(cluster: Cluster) -> list[dict]:
    out = []
    for name, consumer in sorted(cluster.consumers.items()):
        status = "crashed" if not consumer.alive else "closed" if consumer.closed else "active"
        coordinator = getattr(consumer, "coordinator", None)
        out.append({"name": name, "node": consumer.node, "group": consumer.group_id, "status": status,
                    "member_id": getattr(consumer, "member_id", "") or None,   # tells a re-joined name from its crashed self
                    "polls_by_itself": consumer.app is not None,
                    "stable": bool(status == "active" and coordinator is not None and consumer.is_stable())})
    return out
