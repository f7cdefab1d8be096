"""A lab cluster that outlives its process: what ZooKeeper and the brokers keep on disk.

    <data_dir>/cluster.json          the cluster's shape (brokers, seed, config, truncation), its
                                     virtual clock, and a copy of its topics and controller epoch
    <data_dir>/zookeeper/data.json   the persistent metadata nodes: topics' assignments and ids,
                                     partition states (leader, epoch, ISR), topic configs, the
                                     controller epoch — the source of truth (engine/metadata/zk.py)
    <data_dir>/broker-N/…            each broker's logs and checkpoints (written as it runs)

In KRaft mode (config `metadata: kraft`) there is no ZooKeeper: the metadata is the
`__cluster_metadata` log in each controller's data dir (`broker-N/__cluster_metadata-0/` in combined
mode, `controller-10N/...` for dedicated controllers), and opening the cluster replays it; the
zookeeper file is written empty.

Ephemeral nodes (broker registrations, /controller) die with the process, as a ZooKeeper
session would. Opening a saved cluster starts its brokers on their data dirs: each recovers
its logs (from its checkpoints, or fully after a crash), a controller is elected and sends every
broker its partitions' state — a restart, not a fresh start. The command-line tools use this.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict

from engine import events as ev
from engine.cluster import Cluster, ClusterError
from engine.common.errors import Errors
from engine.metadata import zk
from engine.storage.checkpoints import write_atomically

CLUSTER_FILE = "cluster.json"
STORE_FILE = os.path.join("zookeeper", "data.json")
FORMAT_VERSION = 1


def exists(data_dir: str) -> bool:
    return os.path.exists(os.path.join(data_dir, CLUSTER_FILE))


def create(data_dir: str, *, brokers: int = 3, seed: int = 0, config: dict | None = None,
           truncation: str = "leader-epoch", on_event: Callable[[ev.Event], None] | None = None) -> Cluster:
    if exists(data_dir):
        raise ClusterError(f"{data_dir} already holds a lab cluster", Errors.INVALID_REQUEST)
    cluster = Cluster(brokers, data_dir, seed, config=config, truncation=truncation, on_event=on_event)
    cluster.shape = {"brokers": brokers, "seed": seed, "config": dict(config or {}), "truncation": truncation}
    save(cluster)
    return cluster


def save(cluster: Cluster) -> None:
    shape = getattr(cluster, "shape", None) or {
        "brokers": len(cluster.brokers), "seed": cluster.seed, "config": {},
        "truncation": cluster.cluster_config.truncation}
    payload = {"version": FORMAT_VERSION, **shape, "now_ms": cluster.now_ms,
               "controller_epoch": cluster.controller_epoch,
               "topics": [asdict(info) for info in cluster.topics.values()]}
    os.makedirs(os.path.join(cluster.data_dir, "zookeeper"), exist_ok=True)
    write_atomically(os.path.join(cluster.data_dir, CLUSTER_FILE), [json.dumps(payload, indent=1)])
    persistent = cluster.store.dump(persistent_only=True)
    write_atomically(os.path.join(cluster.data_dir, STORE_FILE), [json.dumps(persistent, indent=1)])


def open_cluster(data_dir: str, *, on_event: Callable[[ev.Event], None] | None = None) -> Cluster:
    """Start a saved cluster again on its data dir (its brokers recover their logs)."""
    try:
        with open(os.path.join(data_dir, CLUSTER_FILE), encoding="utf-8") as f:
            saved = json.load(f)
        with open(os.path.join(data_dir, STORE_FILE), encoding="utf-8") as f:
            nodes = json.load(f)
    except FileNotFoundError:
        raise ClusterError(f"No lab cluster in {data_dir} (create one first)", Errors.INVALID_REQUEST) from None
    if saved.get("version") != FORMAT_VERSION:
        raise ClusterError(f"{data_dir}: unknown cluster format {saved.get('version')!r}", Errors.INVALID_REQUEST)

    def restore(cluster: Cluster) -> None:
        cluster.scheduler.advance_to(int(saved["now_ms"]))
        if not cluster.kraft:      # KRaft: the controllers replay their metadata logs instead
            _restore_nodes(cluster, saved, nodes)

    cluster = Cluster(int(saved["brokers"]), data_dir, int(saved["seed"]), config=saved["config"],
                      truncation=saved["truncation"], on_event=on_event, restore=restore)
    cluster.shape = {k: saved[k] for k in ("brokers", "seed", "config", "truncation")}
    return cluster


def _restore_nodes(cluster: Cluster, saved: dict, nodes: dict[str, dict]) -> None:
    """The saved metadata nodes back in the store: topics first, in the order they were created
    (the store lists topics by creation), then the rest. Files saved before the topic ids and the
    controller epoch lived in the store keep them only in cluster.json: they are put back there."""
    for info in saved["topics"]:
        path = zk.topic_path(info["name"])
        data = dict(nodes.get(path) or {"partitions": {}})
        data.setdefault("topic_id", info.get("topic_id", ""))
        cluster.store.create(path, data)
    for path, data in nodes.items():
        if not cluster.store.exists(path):
            cluster.store.create(path, data)
    if not cluster.store.exists(zk.CONTROLLER_EPOCH_PATH):
        cluster.store.create(zk.CONTROLLER_EPOCH_PATH, {"epoch": int(saved["controller_epoch"])})


def close(cluster: Cluster) -> None:
    """Shut the brokers down cleanly and save what the next process needs."""
    cluster.close()
    save(cluster)
