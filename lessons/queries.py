"""The small query language a lesson uses to compute an answer from the engine.

A lesson never stores the answer the player trusts: each question names a query, and the query
is run over the cluster at the moment of observation (after the beat's steps have played). The
same query feeds the evidence the page highlights: the events it picked, the replica cells, the
segments, the group members.

A query is a JSON object:

    {"from": <source>, "where": {<field>: <test>, ...}, "pick": "last", "field": "leader",
     "then": [<op>, ...]}

- `from`: `events` (this beat's events; `"scope": "lesson"` for every event since the lesson's
  scenario began), `partitions`, `replicas`, `segments`, `lookups` (the path a read of each
  offset takes on each replica: the segment found by binary search, the index entry, the batches
  the forward scan reads — engine.storage.log.Log.locate), `brokers`, `members`, `committed`,
  `produced`, `consumed`, `processed`, `checkpoints`.
- `where`: every field must match. A test is a value (equality), or an object with one of
  `in`, `not`, `gte`, `lte`, `contains`; a value may itself be `{"query": {...}}`, run first
  (e.g. "the replica on the broker that leads t-0").
- `pick`: `all` (default: the list), `first`, `last`, `one` (exactly one item or an error),
  `count`.
- `field`: a dotted path read from each picked item (`removed.value` maps over a list).
- `then`: operations on the result, in order: `count`, `sum`, `min`, `max`, `sorted`, `unique`,
  `flatten`, `first`, `last`, `not`, or an object: `{"contains": x}`, `{"equals": x}`,
  `{"minus": <query>}`, `{"plus": <query>}`, `{"index": n}`, `{"div": n}` (a whole number
  divided by a positive whole number, rounded down: `{"div": 1000}` turns ms into whole seconds,
  so a question can ask "how many seconds" of a time the engine knows to the millisecond).

Items carry `tp` ("t-0") wherever they have a topic and partition, so `{"tp": "t-0"}` filters.
Internal topics (`__consumer_offsets`) are left out of `partitions`, `replicas` and `segments`
unless `"internal": true`. Pure Python over `engine.cluster.Cluster`: no Django.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine import events as ev
from engine.inspect import groups as describe
from engine.inspect.cluster import cluster_state, produced

SOURCES = ("events", "partitions", "replicas", "segments", "lookups", "brokers", "members", "committed", "produced",
           "consumed", "processed", "checkpoints")
MAX_LOOKUPS_PER_REPLICA = 2_000
PICKS = ("all", "first", "last", "one", "count")
SIMPLE_OPS = ("count", "sum", "min", "max", "sorted", "unique", "flatten", "first", "last", "not")
ARG_OPS = ("contains", "equals", "minus", "plus", "index", "div")
TESTS = ("in", "not", "gte", "lte", "contains")
QUERY_KEYS = {"from", "where", "pick", "field", "then", "scope", "internal"}


class QueryError(ValueError):
    """A query that cannot be evaluated (malformed, or its answer does not exist in this state)."""


@dataclass
class Answer:
    """A query's value and what the page should highlight as its evidence."""
    value: Any
    evidence: list[dict] = field(default_factory=list)


@dataclass
class World:
    """What a query reads: the cluster now, this beat's events and the lesson's events so far.
    The events may be given as a function, called only when a query reads them (a lab session's
    history is on disk: a `do` beat's check over the state, run after every frame, reads none)."""
    cluster: Any
    beat_events: list[dict] | Callable[[], list[dict]]
    lesson_events: list[dict] | Callable[[], list[dict]]
    _cache: dict[str, list[dict]] = field(default_factory=dict)

    def events(self, scope: str) -> list[dict]:
        name = "lesson_events" if scope == "lesson" else "beat_events"
        found = getattr(self, name)
        if callable(found):
            found = found()
            setattr(self, name, found)
        return found

    def items(self, source: str, *, internal: bool, scope: str) -> list[dict]:
        if source == "events":
            return self.events(scope)
        key = f"{source}:{internal}"
        if key not in self._cache:
            self._cache[key] = _SOURCES[source](self.cluster, internal)
        return self._cache[key]


# -- checking ---------------------------------------------------------------------------------
def check(query: Any, where: str = "query") -> None:
    """Raise QueryError naming `where` if `query` is not a well-formed query."""
    if not isinstance(query, dict):
        raise QueryError(f"{where} must be an object")
    unknown = set(query) - QUERY_KEYS
    if unknown:
        raise QueryError(f"{where} has unknown keys {sorted(unknown)} (known: {sorted(QUERY_KEYS)})")
    if query.get("from") not in SOURCES:
        raise QueryError(f"{where}.from must be one of {', '.join(SOURCES)}, not {query.get('from')!r}")
    if query.get("pick", "all") not in PICKS:
        raise QueryError(f"{where}.pick must be one of {', '.join(PICKS)}")
    if query.get("scope", "beat") not in ("beat", "lesson"):
        raise QueryError(f"{where}.scope must be 'beat' or 'lesson'")
    if not isinstance(query.get("internal", False), bool):
        raise QueryError(f"{where}.internal must be true or false")
    if "field" in query and not (isinstance(query["field"], str) and query["field"]):
        raise QueryError(f"{where}.field must be a non-empty text")
    where_clause = query.get("where", {})
    if not isinstance(where_clause, dict):
        raise QueryError(f"{where}.where must be an object")
    for name, test in where_clause.items():
        _check_test(test, f"{where}.where.{name}")
    then = query.get("then", [])
    if not isinstance(then, list):
        raise QueryError(f"{where}.then must be a list")
    for index, op in enumerate(then):
        _check_op(op, f"{where}.then[{index}]")


def _check_test(test: Any, where: str) -> None:
    if isinstance(test, dict):
        if set(test) == {"query"}:
            check(test["query"], f"{where}.query")
            return
        if len(test) != 1 or next(iter(test)) not in TESTS:
            raise QueryError(f"{where} must be a value, {{'query': …}} or one of {', '.join(TESTS)}")
        (name, value), = test.items()
        if name == "in" and not isinstance(value, list):
            raise QueryError(f"{where}.in must be a list")
        if isinstance(value, dict):
            _check_test(value, f"{where}.{name}")
    elif isinstance(test, float) and not math.isfinite(test):
        raise QueryError(f"{where} must be finite")


def _check_op(op: Any, where: str) -> None:
    if isinstance(op, str):
        if op not in SIMPLE_OPS:
            raise QueryError(f"{where} must be one of {', '.join(SIMPLE_OPS + ARG_OPS)}, not {op!r}")
        return
    if not isinstance(op, dict) or len(op) != 1 or next(iter(op)) not in ARG_OPS:
        raise QueryError(f"{where} must be one of {', '.join(SIMPLE_OPS)} or {{op: argument}} with op in "
                         f"{', '.join(ARG_OPS)}")
    (name, value), = op.items()
    if name in ("minus", "plus"):
        check(value, f"{where}.{name}")
    if name == "index" and (not isinstance(value, int) or isinstance(value, bool)):
        raise QueryError(f"{where}.index must be a whole number")
    if name == "div" and (not isinstance(value, int) or isinstance(value, bool) or value <= 0):
        raise QueryError(f"{where}.div must be a whole number above 0")


# -- evaluating -------------------------------------------------------------------------------
def evaluate(query: dict, world: World) -> Answer:
    """Run a checked query. QueryError when the state has no answer (e.g. `one` found two)."""
    items = world.items(query["from"], internal=bool(query.get("internal")), scope=query.get("scope", "beat"))
    tests = {name: _resolve(test, world) for name, test in query.get("where", {}).items()}
    chosen = [item for item in items if all(_matches(_read(item, name), test) for name, test in tests.items())]
    pick = query.get("pick", "all")
    evidence_items = chosen
    if pick == "count":
        value: Any = len(chosen)
    elif pick == "all":
        value = chosen
    elif not chosen:
        raise QueryError(f"no {query['from']} matched {query.get('where', {})}")
    elif pick == "one" and len(chosen) != 1:
        raise QueryError(f"{len(chosen)} {query['from']} matched {query.get('where', {})}, expected one")
    else:
        evidence_items = [chosen[0] if pick in ("first", "one") else chosen[-1]]
        value = evidence_items[0]
    if "field" in query:
        value = [_read(item, query["field"]) for item in value] if pick == "all" else (
            _read(value, query["field"]) if pick != "count" else value)
    evidence = [item["_ref"] for item in evidence_items if "_ref" in item]
    for op in query.get("then", []):
        value, more = _apply(op, value, world)
        evidence += more
    return Answer(_public(value), _distinct(evidence))


def _resolve(test: Any, world: World) -> Any:
    if isinstance(test, dict) and set(test) == {"query"}:
        return evaluate(test["query"], world).value
    if isinstance(test, dict):
        (name, value), = test.items()
        return {name: _resolve(value, world)}
    return test


def _matches(value: Any, test: Any) -> bool:
    if isinstance(test, dict) and len(test) == 1 and next(iter(test)) in TESTS:
        (name, arg), = test.items()
        if name == "in":
            return any(_same(value, item) for item in arg)
        if name == "not":
            return not _matches(value, arg)
        if name == "contains":
            return isinstance(value, (list, str)) and arg in value
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return False
        return value >= arg if name == "gte" else value <= arg
    return _same(value, test)


def _same(a: Any, b: Any) -> bool:
    """Equality as JSON means it: true is not 1, and false is not 0."""
    if isinstance(a, bool) != isinstance(b, bool):
        return False
    return a == b


def _read(item: Any, path: str) -> Any:
    value = item
    for part in path.split("."):
        if isinstance(value, list):
            value = [_read(v, part) for v in value]
        elif isinstance(value, dict):
            value = value.get(part)
        else:
            return None
    return value


def _apply(op: Any, value: Any, world: World) -> tuple[Any, list[dict]]:
    """One `then` operation; a value it cannot take (None among numbers, lists to sort against
    numbers, a number to flatten) is a QueryError naming both, never a crash."""
    try:
        return _apply_op(op, value, world)
    except TypeError as error:
        raise QueryError(f"{op!r} cannot take {value!r}: {error}") from None


def _apply_op(op: Any, value: Any, world: World) -> tuple[Any, list[dict]]:
    if isinstance(op, str):
        return _SIMPLE[op](value), []
    (name, arg), = op.items()
    if name == "contains":
        return isinstance(value, list) and arg in value, []
    if name == "equals":
        return _same(value, arg), []
    if name == "index":
        if not isinstance(value, list) or not -len(value) <= arg < len(value):
            raise QueryError(f"no item {arg} in {value!r}")
        return value[arg], []
    if name == "div":
        if not isinstance(value, int) or isinstance(value, bool):
            raise QueryError(f"div needs a whole number, not {value!r}")
        return value // arg, []
    other = evaluate(arg, world)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (value, other.value)):
        raise QueryError(f"{name} needs two whole numbers, not {value!r} and {other.value!r}")
    return (value - other.value if name == "minus" else value + other.value), other.evidence


def _first(value: Any) -> Any:
    if not isinstance(value, list) or not value:
        raise QueryError(f"no first item in {value!r}")
    return value[0]


def _last(value: Any) -> Any:
    if not isinstance(value, list) or not value:
        raise QueryError(f"no last item in {value!r}")
    return value[-1]


def _flatten(value: Any) -> list:
    if not isinstance(value, list):
        raise QueryError(f"flatten needs a list, not {value!r}")
    return [x for v in value for x in (v if isinstance(v, list) else [v])]


def _unique(values: Any) -> list:
    if not isinstance(values, list):
        raise QueryError(f"unique needs a list, not {values!r}")
    out: list = []
    for value in values:
        if not any(_same(value, seen) for seen in out):
            out.append(value)
    return out


def _numbers(value: Any) -> list:
    if not isinstance(value, list) or not value:
        raise QueryError(f"needs a non-empty list of numbers, not {value!r}")
    return value


_SIMPLE: dict[str, Callable[[Any], Any]] = {
    "count": lambda v: len(v) if isinstance(v, list) else int(v is not None),
    "sum": lambda v: sum(_numbers(v)), "min": lambda v: min(_numbers(v)), "max": lambda v: max(_numbers(v)),
    "sorted": lambda v: sorted(v), "unique": _unique,
    "flatten": _flatten, "first": _first, "last": _last, "not": lambda v: not v,
}


def _public(value: Any) -> Any:
    """Items lose their private `_ref`; a tuple becomes a list (answers are JSON)."""
    if isinstance(value, dict):
        return {k: _public(v) for k, v in value.items() if k != "_ref"}
    if isinstance(value, (list, tuple)):
        return [_public(v) for v in value]
    return value


def _distinct(evidence: list[dict]) -> list[dict]:
    seen, out = set(), []
    for item in evidence:
        key = tuple(sorted(item.items()))
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out[:200]


# -- sources ----------------------------------------------------------------------------------
def _partitions(cluster: Any, internal: bool) -> list[dict]:
    """The partitions as `cluster_state` describes them, with `tp`, the OSR and the leader's LEO."""
    out = []
    for p in cluster_state(cluster, with_records=False, include_internal=internal)["partitions"]:
        tp = f"{p['topic']}-{p['partition']}"
        leader = p["replica_states"].get(str(p["leader"]), {})
        out.append({"topic": p["topic"], "partition": p["partition"], "tp": tp, "leader": p["leader"],
                    "leader_epoch": p["leader_epoch"], "replicas": list(p["replicas"]), "isr": list(p["isr"]),
                    "osr": [r for r in p["replicas"] if r not in p["isr"]],
                    "high_watermark": p["high_watermark"], "log_end_offset": leader.get("log_end_offset", -1),
                    "log_start_offset": p["log_start_offset"], "_ref": {"kind": "partition", "tp": tp}})
    return out


def _replica_parts(cluster: Any, internal: bool):
    for topic, p in cluster.all_partitions():
        if topic.startswith("__") and not internal:
            continue
        state = cluster.partition_state(topic, p)
        for broker in state["replicas"]:
            yield topic, p, state, broker, cluster.brokers[broker].partitions.get((topic, p))


def _replicas(cluster: Any, internal: bool) -> list[dict]:
    """Every replica as `cluster_state` describes it, one item each, with its records' values."""
    out = []
    for p in cluster_state(cluster, with_records=True, include_internal=internal)["partitions"]:
        tp = f"{p['topic']}-{p['partition']}"
        for broker, replica in p["replica_states"].items():
            broker_id = int(broker)
            item: dict[str, Any] = {"topic": p["topic"], "partition": p["partition"], "tp": tp, "broker": broker_id,
                                    "leader": broker_id == p["leader"], "in_isr": broker_id in p["isr"],
                                    "_ref": {"kind": "replica", "tp": tp, "broker": broker_id}, **replica}
            if replica.get("alive"):
                item["values"] = [r["value"] for r in replica["records"]]
                item["offsets"] = [r["offset"] for r in replica["records"]]
            out.append(item)
    return out


def _segments(cluster: Any, internal: bool) -> list[dict]:
    out = []
    for topic, p, _state, broker, part in _replica_parts(cluster, internal):
        if part is None:
            continue
        segments = part.log.segments
        for index, segment in enumerate(segments):
            tp = f"{topic}-{p}"
            out.append({"topic": topic, "partition": p, "tp": tp, "broker": broker,
                        "base_offset": segment.base_offset, "next_offset": _next_offset(segments, index, part),
                        "size_in_bytes": segment.size, "active": index == len(segments) - 1,
                        "file": f"{segment.base_offset:020d}.log",
                        "_ref": {"kind": "segment", "tp": tp, "broker": broker, "base_offset": segment.base_offset}})
    return out


def _next_offset(segments: Any, index: int, part: Any) -> int:
    return segments[index + 1].base_offset if index + 1 < len(segments) else part.log_end_offset


def _lookups(cluster: Any, internal: bool) -> list[dict]:
    """One item per (replica, offset) of every live replica (its first MAX_LOOKUPS_PER_REPLICA
    offsets): the lookup path the Segments panel animates, as numbers a question can ask for."""
    out = []
    for topic, p, _state, broker, part in _replica_parts(cluster, internal):
        if part is None:
            continue
        log, tp = part.log, f"{topic}-{p}"
        for offset in range(log.log_start_offset, min(log.log_end_offset,
                                                      log.log_start_offset + MAX_LOOKUPS_PER_REPLICA)):
            found = log.locate(offset)
            index = found.index
            out.append({"topic": topic, "partition": p, "tp": tp, "broker": broker, "offset": offset,
                        "segment": found.segment_base_offset, "segment_file": f"{found.segment_base_offset:020d}.log",
                        "segment_probes": len(found.segment_probes),
                        "relative_offset": offset - found.segment_base_offset,
                        "index_slot": index.slot if index else -1,
                        "index_offset": index.offset if index and index.slot >= 0 else None,
                        "index_position": index.position if index and index.slot >= 0 else 0,
                        "batches_scanned": len(found.scan), "position": found.position,
                        "batch_base_offset": found.batch_base_offset, "batch_last_offset": found.batch_last_offset,
                        "value": ev.text(found.record.value) if found.record is not None else None,
                        "_ref": {"kind": "lookup", "tp": tp, "broker": broker, "offset": offset,
                                 "base_offset": found.segment_base_offset}})
    return out


def _brokers(cluster: Any, _internal: bool) -> list[dict]:
    controller = cluster.controller_id()
    return [{"broker": b.id, "alive": b.alive, "controller": b.id == controller,
             "_ref": {"kind": "broker", "broker": b.id}} for b in cluster.brokers.values()]


def _groups(cluster: Any) -> list[dict]:
    return describe.describe_groups(cluster)


def _group_leader(cluster: Any, group: str) -> str | None:
    """The member that computed the group's assignment (its leader), stable or not: the
    coordinator's `leader_id`, by the consumer's name in the lab."""
    _broker, _partition, coordinator = describe.coordinator_of(cluster, group)
    state = coordinator.groups.get(group) if coordinator is not None else None
    if state is None or state.leader_id not in state.members:
        return None
    return describe.member_names(cluster).get(state.leader_id, state.members[state.leader_id].client_id)


def _members(cluster: Any, _internal: bool) -> list[dict]:
    out = []
    for group in _groups(cluster):
        leader = _group_leader(cluster, group["group"])
        for member in group["members"]:
            out.append({"group": group["group"], "member": member["member"], "generation": group["generation"],
                        "assignment": list(member["assignment"]), "partitions": len(member["assignment"]),
                        "coordinator": group["coordinator"], "coordinator_partition": group["coordinator_partition"],
                        "protocol": group["protocol"], "state": group["state"], "group_leader": leader,
                        "_ref": {"kind": "member", "group": group["group"], "member": member["member"]}})
    return out


def _committed(cluster: Any, _internal: bool) -> list[dict]:
    out = []
    for group in _groups(cluster):
        for tp, offset in sorted(group["committed"].items()):
            topic, _, p = tp.rpartition("-")
            out.append({"group": group["group"], "tp": tp, "topic": topic, "partition": int(p), "offset": offset,
                        "lag": group["lag"].get(tp), "coordinator": group["coordinator"],
                        "coordinator_partition": group["coordinator_partition"], "generation": group["generation"],
                        "_ref": {"kind": "group", "group": group["group"]}})
    return out


def _produced(cluster: Any, _internal: bool) -> list[dict]:
    records = produced(cluster)
    return [dict(r, tp=f"{r['topic']}-{r['partition']}" if r.get("partition") is not None else None)
            for r in records]


def _consumed(cluster: Any, _internal: bool) -> list[dict]:
    return [dict(r, consumer=name, tp=f"{r['topic']}-{r['partition']}")
            for name, records in describe.consumed(cluster).items() for r in records]


def _processed(cluster: Any, _internal: bool) -> list[dict]:
    out = []
    for name, records in describe.processed(cluster).items():
        for r in records:
            item = dict(r) if isinstance(r, dict) else {"value": r}
            item["consumer"] = name
            if "topic" in item and "partition" in item:
                item["tp"] = f"{item['topic']}-{item['partition']}"
            out.append(item)
    return out


def _checkpoints(cluster: Any, internal: bool) -> list[dict]:
    """The broker-level checkpoint files as they are on each broker's disk now (a dead broker's
    too: its disk outlives it), one item per (broker, file, partition)."""
    import os

    from engine.broker.broker import HW_CHECKPOINT, LOG_START_CHECKPOINT, RECOVERY_CHECKPOINT
    from engine.storage import checkpoints
    out = []
    for broker in cluster.brokers.values():
        for name in (HW_CHECKPOINT, RECOVERY_CHECKPOINT, LOG_START_CHECKPOINT):
            path = os.path.join(broker.data_dir, name)
            if not os.path.exists(path):
                continue
            for (topic, p), offset in sorted(checkpoints.read_offsets(path).items()):
                if topic.startswith("__") and not internal:
                    continue
                tp = f"{topic}-{p}"
                out.append({"broker": broker.id, "file": name, "tp": tp, "topic": topic, "partition": p,
                            "offset": offset, "_ref": {"kind": "checkpoint", "broker": broker.id, "file": name,
                                                       "tp": tp}})
    return out


_SOURCES: dict[str, Callable[[Any, bool], list[dict]]] = {
    "partitions": _partitions, "replicas": _replicas, "segments": _segments, "lookups": _lookups, "brokers": _brokers,
    "members": _members, "committed": _committed, "produced": _produced, "consumed": _consumed,
    "processed": _processed, "checkpoints": _checkpoints,
}


def event_item(event: dict) -> dict:
    """An event as a query item: `tp` added, its `_ref` for the evidence."""
    item = dict(event)
    if "topic" in item and "partition" in item:
        item["tp"] = f"{item['topic']}-{item['partition']}"
    item["_ref"] = {"kind": "event", "seq": event.get("seq")}
    return item
