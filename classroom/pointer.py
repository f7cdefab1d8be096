"""The instructor's pointer: a highlight on a broker, a replica or an event, checked against the cluster.

A `pointer` message's target is one of
  {"kind": "broker", "broker": <id>}
  {"kind": "replica", "topic": <name>, "partition": <n>, "broker": <id>}
  {"kind": "event", "seq": <n>}
or null (the pointer is cleared). Each is checked whole against the session's cluster as it stands
(its brokers, topics, replica assignment, events published so far) before it reaches any tab: a
page marks what the target names through its views' data attributes, so a target naming nothing
would mark nothing and say nothing. `place` sets it on a live session and sends it to every tab
(LabConsumer's and WatchConsumer's `pointer` message); the rest are pure functions over the engine.
"""
from __future__ import annotations

import asyncio
from typing import Any

from engine.cluster import Cluster
from engine.replication.controller import partition_path
from lab.host_types import HostError

KINDS = ("broker", "replica", "event")
MAX_TOPIC_CHARS = 249   # Kafka's own limit on a topic's name


class PointerError(ValueError):
    """A target that names nothing in the cluster (or is not a target): said to the sender."""


def checked_target(cluster: Cluster, target: Any) -> dict[str, Any] | None:
    """The target as sent to every tab (only its own fields), or None to clear; PointerError if
    it is not one this cluster has. Read it under the host's lock."""
    if target is None:
        return None
    if not isinstance(target, dict):
        raise PointerError("'target' must be an object with a 'kind' (broker, replica, event) or null")
    kind = target.get("kind")
    if kind == "broker":
        return {"kind": "broker", "broker": _broker(cluster, target.get("broker"))}
    if kind == "replica":
        topic = target.get("topic")
        if not isinstance(topic, str) or not 0 < len(topic) <= MAX_TOPIC_CHARS:
            raise PointerError(f"'topic' must be a topic's name, not {topic!r}")
        info = cluster.topics.get(topic)
        if info is None:
            raise PointerError(f"There is no topic {topic!r} in this cluster")
        partition = _whole(target.get("partition"), "partition")
        if partition >= info.partitions:
            raise PointerError(f"Topic {topic!r} has partitions 0 to {info.partitions - 1}, not {partition}")
        broker = _broker(cluster, target.get("broker"))
        replicas = cluster.store.get(partition_path(topic, partition))[0]["replicas"]
        if broker not in replicas:
            raise PointerError(f"Broker {broker} holds no replica of {topic}-{partition} (its replicas: "
                               f"{', '.join(map(str, replicas))})")
        return {"kind": "replica", "topic": topic, "partition": partition, "broker": broker}
    if kind == "event":
        seq = _whole(target.get("seq"), "seq")
        if seq >= cluster.bus.count:
            raise PointerError(f"Event {seq} has not happened: events 0 to {cluster.bus.count - 1} have")
        return {"kind": "event", "seq": seq}
    raise PointerError(f"A pointer's 'kind' is one of {', '.join(KINDS)}, not {kind!r}")


def _whole(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise PointerError(f"'{name}' must be a whole number >= 0, not {value!r}")
    return value


def _broker(cluster: Cluster, value: Any) -> int:
    broker = _whole(value, "broker")
    if broker not in cluster.brokers:
        raise PointerError(f"There is no broker {broker} (brokers: {', '.join(map(str, sorted(cluster.brokers)))})")
    return broker


async def place(live: Any, target: Any) -> dict[str, Any] | None:
    """Check `target` against `live`'s cluster (a lab.registry.LiveSession), keep it there (a tab
    joining later is sent it) and send a `pointer` message to every tab. HostError if it names
    nothing."""
    def check() -> dict[str, Any] | None:
        with live.host.lock:
            return checked_target(live.host.cluster, target)
    try:
        checked = await asyncio.to_thread(check)
    except PointerError as error:
        raise HostError(str(error), "INVALID_REQUEST") from None
    live.pointer = checked
    live.post("pointer", target=checked)
    return checked
