"""The lab's view of a cluster at one instant, in the shape docs/lab-protocol.md gives `state`.

Built from live engine objects, cheaply: each replica's newest records are read from the tail of
its Log (at most RECORDS_PER_REPLICA), never the whole log as engine.inspect's `cluster_state` does;
the replicas' view is engine.inspect's too (`replica_states`). Pure functions over the engine; no Django.
"""
from __future__ import annotations

import json.encoder
from dataclasses import fields
from typing import Any

from engine import events as ev
from engine.cluster import Cluster
from engine.inspect.cluster import replica_states
from engine.inspect.groups import describe_groups

RECORDS_PER_REPLICA = 200


def snapshot(cluster: Cluster) -> dict[str, Any]:
    controller = cluster.controller_id()
    return {
        "time_ms": cluster.now_ms,
        "step": cluster.scheduler.steps,
        "controller": controller,
        "brokers": [{"id": b.id, "alive": b.alive, "controller": b.id == controller,
                     "paused_fetcher": b.fetchers_paused} for b in cluster.brokers.values()],
        "links_cut": [list(link) for link in cluster.network.cut_links()],
        "topics": [{"topic": t.name, "partitions": t.partitions, "replication_factor": t.replication_factor,
                    "config": dict(t.config)} for t in cluster.topics.values()],
        "partitions": [_partition(cluster, topic, p) for topic, p in cluster.all_partitions()],
        "groups": describe_groups(cluster),
        "produced_count": len(cluster.produced) + sum(p.sent_count() for p in cluster.producers.values()),
        "event_count": cluster.bus.count,
    }


def _partition(cluster: Cluster, topic: str, p: int) -> dict[str, Any]:
    state = cluster.partition_state(topic, p)
    leader = state["leader"]
    leader_part = cluster.brokers[leader].partitions.get((topic, p)) if leader >= 0 else None
    return {"topic": topic, "partition": p, "leader": leader, "leader_epoch": state["leader_epoch"],
            "isr": list(state["isr"]), "replicas": list(state["replicas"]),
            "high_watermark": leader_part.high_watermark if leader_part is not None else -1,
            "replica_states": replica_states(cluster, topic, p, state["replicas"],
                                             records_per_replica=RECORDS_PER_REPLICA)}


_PLAIN: dict[type, bool] = {}


def event_dict(event: ev.Event) -> dict[str, Any]:
    """`event.to_dict()` without `dataclasses.asdict`'s deep copy (the result is serialised at
    once, so sharing the event's lists is safe). An event's `__dict__` holds exactly its fields,
    in declaration order (the dataclass __init__ sets them so), which is checked once per class;
    copying it is several times faster than reading the fields one by one."""
    plain = _PLAIN.get(type(event))
    if plain is None:
        plain = _PLAIN[type(event)] = list(getattr(event, "__dict__", ())) == [f.name for f in fields(event)]
    data = dict(event.__dict__) if plain else {f.name: getattr(event, f.name) for f in fields(event)}
    data["kind"] = event.kind
    return data


def _not_json(value: object) -> None:
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


# json.dumps builds a new C encoder for every call, which cost more than encoding a small event
# itself; this one is built once. Same output as json.dumps' defaults (ASCII, ", " and ": ").
# No circular-reference markers: an event is a tree of plain values.
_encode = json.encoder.c_make_encoder(None, _not_json, json.encoder.encode_basestring_ascii, None, ": ", ", ",
                                      False, False, True) if json.encoder.c_make_encoder else None


def event_json(event: ev.Event) -> str:
    """`json.dumps(event_dict(event))`, faster."""
    if _encode is None:
        return json.dumps(event_dict(event))
    return "".join(_encode(event_dict(event), 0))
