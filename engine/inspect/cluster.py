"""The whole cluster at one instant, in the scenario runner's JSON shape (`cluster_state`), and each
replica's view of a partition (`replica_states`), which the lab's snapshot (lab/snapshot.py) shows too:

    {"time_ms": 1234, "brokers": [{"id": 1, "alive": true, "controller": true}, ...],
     "partitions": [{"topic": "t", "partition": 0, "leader": 1, "leader_epoch": 0, "replicas": [1, 2],
                     "isr": [1, 2], "high_watermark": 3, "log_start_offset": 0,
                     "replica_states": {"1": {"alive": true, "log_start_offset": 0, "log_end_offset": 3,
                                              "high_watermark": 3, "leader_epoch_cache": [[0, 0]],
                                              "records": [{"offset": 0, "key": "k", "value": "m1"}, ...]},
                                        "2": {"alive": false}}}],
     "produced": [...], "groups": [...], "consumed": {...}, "processed": {...}, "events": 57}

A replica shows `"alive": false` when its broker holds no replica of the partition (it is down, or has
not created it yet). Internal topics (__consumer_offsets) are left out unless asked for: their state
shows in "groups".
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine import events as ev
from engine.inspect import groups

if TYPE_CHECKING:
    from engine.cluster import Cluster
    from engine.storage.log import Log


def cluster_state(cluster: Cluster, *, with_records: bool = True, include_internal: bool = False) -> dict:
    """Everything at once (what `python -m engine.scenarios` prints), every replica's records included
    unless `with_records` is False."""
    controller = cluster.controller_id()
    return {
        "time_ms": cluster.now_ms,
        "partitions": [_partition(cluster, topic, p, with_records) for topic, p in cluster.all_partitions()
                       if include_internal or not topic.startswith("__")],
        "produced": produced(cluster),
        "produced_left_out": cluster.produced.left_out(),   # sends of Cluster.produce no longer kept
        "brokers": [{"id": b.id, "alive": b.alive, "controller": b.id == controller}
                    for b in cluster.brokers.values()],
        "groups": groups.describe_groups(cluster),
        "consumed": groups.consumed(cluster),
        "processed": groups.processed(cluster),
        "events": cluster.bus.count,
    }


def _partition(cluster: Cluster, topic: str, p: int, with_records: bool) -> dict:
    state = cluster.partition_state(topic, p)
    leader_part = cluster.brokers[state["leader"]].partitions.get((topic, p)) if state["leader"] >= 0 else None
    return {"topic": topic, "partition": p, "leader": state["leader"], "leader_epoch": state["leader_epoch"],
            "replicas": state["replicas"], "isr": state["isr"],
            "high_watermark": leader_part.high_watermark if leader_part else -1,
            "log_start_offset": leader_part.log.log_start_offset if leader_part else -1,
            "replica_states": replica_states(cluster, topic, p, state["replicas"],
                                             records_per_replica=None if with_records else 0)}


def replica_states(cluster: Cluster, topic: str, p: int, replicas: list[int], *,
                   records_per_replica: int | None = None) -> dict[str, dict[str, Any]]:
    """Each replica of `topic`-`p` on its broker, by broker id (as text, a JSON key). `records`: the
    replica's newest `records_per_replica` records, oldest first; all of them when None; left out when 0."""
    out: dict[str, dict[str, Any]] = {}
    for replica in replicas:
        part = cluster.brokers[replica].partitions.get((topic, p))
        if part is None:
            out[str(replica)] = {"alive": False}
            continue
        entry = {"alive": True, "log_start_offset": part.log.log_start_offset, "log_end_offset": part.log_end_offset,
                 "high_watermark": part.high_watermark,
                 "leader_epoch_cache": [list(e) for e in part.epoch_cache.entries]}
        if records_per_replica != 0:
            entry["records"] = tail_records(part.log, records_per_replica)
        out[str(replica)] = entry
    return out


def tail_records(log: Log, count: int | None = None) -> list[dict[str, Any]]:
    """The last `count` records of `log` (fewer if it holds fewer; all when None), oldest first."""
    start = log.log_start_offset if count is None else max(log.log_start_offset, log.log_end_offset - count)
    records = [{"offset": r.offset, "key": ev.text(r.key), "value": ev.text(r.value)} for r in log.records_from(start)]
    return records if count is None else records[-count:]


def produced(cluster: Cluster) -> list[dict]:
    """Every send the cluster's producers made that is still kept: Cluster.produce's, then each producer's."""
    return ([{"step": r.tag, "request_id": r.request_id, "topic": r.topic, "partition": r.partition,
              "key": ev.text(r.key), "value": ev.text(r.value), "acks": r.acks, "acked": r.acked,
              "offset": r.offset, "error": r.error} for r in cluster.produced]
            + [record for producer in cluster.producers.values() for record in producer.records()])
