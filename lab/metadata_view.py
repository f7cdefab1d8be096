"""The metadata layer as the lab shows it: ZooKeeper's znodes, or the KRaft quorum and its log.

Three sections of the page's model (lab/model.py), each a pure function of the cluster's state at
this step, so that a fresh snapshot gives exactly what the patches built:

- `metadata`: the mode, and
  - ZooKeeper mode: every znode (path, data as its JSON text, ephemeral or persistent, version)
    and the controller (`/controller`'s broker, -1 with none) with its epoch (`/controller_epoch`);
  - KRaft: `controller_mode` (combined: the controllers are brokers, `process.roles=broker,controller`;
    dedicated: nodes of their own), `active_controller` (the QuorumController that is active, -1
    while none is), every voter of the quorum (its Raft state, epoch, leader, vote, metadata log
    end offset and high watermark — what DescribeQuorum and `kafka-metadata-quorum describe
    --replication` report) and every broker's side (its metadata offset: the last record its image
    replayed; its broker epoch; fenced as the broker itself knows it, and as the committed image says).
    A voter whose node is down shows what its disk keeps (quorum-state's epoch, leader and vote, the
    log end offset) with state "down" and no high watermark (Kafka keeps the metadata log's high
    watermark in memory only).
- `metadata_records`: KRaft's last RECORDS_SHOWN committed records of `__cluster_metadata`, each
  `{offset, epoch, control, record}` with `record` Kafka's JSON of it (engine.metadata.records.describe,
  as kafka-dump-log --cluster-metadata-decoder prints it; control records such as LeaderChange too).
  They are read from the log of the running voter that knows the highest high watermark (the leader's
  when there is one): every voter's committed prefix is the same (Raft's log matching), so which
  voter is read does not change the answer. Empty in ZooKeeper mode.
- `controller_nodes`: KRaft's dedicated controller nodes, which the cluster view draws beside the
  brokers (they are on the network, but hold no partitions): `{id, node, alive, active}`.

`MetadataView` caches what is costly to recompute at every patch: the znodes by ZooKeeper's zxid,
and the committed records read so far from each voter's log (committed records never change).
"""
from __future__ import annotations

import json
from typing import Any

from engine.cluster import Cluster
from engine.metadata import records as mr
from engine.storage import record_batch as rb

RECORDS_SHOWN = 24
READ_CHUNK_BYTES = 256 * 1024


class MetadataView:
    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self._znodes: tuple[int, list[dict]] | None = None      # (zxid, znodes)
        # voter id -> (the log object read, the offset read up to (a batch boundary), the newest records)
        self._read: dict[int, tuple[Any, int, list[dict]]] = {}

    def sections(self) -> dict[str, Any]:
        c = self.cluster
        if not c.kraft:
            return {"metadata": self._zookeeper(), "metadata_records": [], "controller_nodes": []}
        return {"metadata": self._kraft(), "metadata_records": self._records(),
                "controller_nodes": [{"id": node_id, "node": server.node, "alive": server.alive,
                                      "active": server.controller is not None and server.controller.is_active()}
                                     for node_id, server in sorted(c.controller_nodes.items())]}

    # -- ZooKeeper mode ---------------------------------------------------------------------------
    def _zookeeper(self) -> dict[str, Any]:
        store = self.cluster.store
        if self._znodes is None or self._znodes[0] != store.zxid:
            persistent = store.dump(persistent_only=True)
            znodes = [{"path": path, "data": json.dumps(data, sort_keys=True), "ephemeral": path not in persistent,
                       "version": store.get(path)[1]}
                      for path, data in store.dump().items()]
            self._znodes = (store.zxid, znodes)
        controller = store.peek("/controller")
        epoch = store.peek("/controller_epoch")
        return {"mode": "zookeeper", "controller": controller["brokerid"] if controller else -1,
                "controller_epoch": epoch["epoch"] if epoch else 0, "znodes": self._znodes[1]}

    # -- KRaft ------------------------------------------------------------------------------------
    def _kraft(self) -> dict[str, Any]:
        c = self.cluster
        active = c.controller
        registered = getattr(c.metadata, "brokers", {})   # the committed image the facade reads (engine.cluster)
        return {"mode": "kraft", "controller_mode": c.cluster_config.controller_mode,
                "active_controller": active.node_id if active is not None else -1,
                "voters": [self._voter(node_id, node) for node_id, node in sorted(c.cluster_config.voters.items())],
                "brokers": [_broker(b, registered) for _, b in sorted(c.brokers.items())]}

    def _voter(self, node_id: int, node: str) -> dict[str, Any]:
        host, raft, controller = self._voter_parts(node_id)
        out: dict[str, Any] = {"id": node_id, "node": node,
                               "role": "dedicated" if node_id in self.cluster.controller_nodes else "combined",
                               "alive": bool(host is not None and host.alive), "active": False}
        if raft is None:
            return {**out, "state": "down", "epoch": 0, "leader": -1, "voted_for": -1, "log_end_offset": 0,
                    "high_watermark": None}
        described = raft.describe()
        out.update({"state": described["state"] if raft.running else "down", "epoch": described["epoch"],
                    "leader": described["leader_id"], "voted_for": described["voted_for"],
                    "log_end_offset": described["log_end_offset"],
                    "high_watermark": described["high_watermark"] if raft.running else None,
                    "active": bool(out["alive"] and controller is not None and controller.is_active())})
        return out

    def _voter_parts(self, node_id: int) -> tuple[Any, Any, Any]:
        """(the node hosting the voter, its Raft client, its QuorumController); None where absent."""
        c = self.cluster
        server = c.controller_nodes.get(node_id)
        if server is not None:
            return server, server.raft, server.controller
        broker = c.brokers.get(node_id)
        if broker is None or broker.kraft is None:
            return None, None, None
        return broker, broker.kraft.raft, broker.kraft.controller

    # -- the committed records --------------------------------------------------------------------
    def _records(self) -> list[dict]:
        best: tuple[int, int, Any] | None = None
        for node_id in sorted(self.cluster.cluster_config.voters):
            _, raft, _ = self._voter_parts(node_id)
            if raft is None or not raft.running:
                continue
            if best is None or raft.high_watermark > best[0]:
                best = (raft.high_watermark, node_id, raft)
        if best is None:
            return []
        high_watermark, node_id, raft = best
        log = raft.metadata_log.log
        seen = self._read.get(node_id)
        if seen is None or seen[0] is not log or seen[1] > high_watermark:
            seen = (log, 0, [])
        _, offset, shown = seen
        shown = list(shown)
        while offset < high_watermark:
            data = log.read_batches(offset, READ_CHUNK_BYTES, max_offset=high_watermark).records
            start, position = offset, 0
            while position < len(data):
                header, records = rb.decode_batch(data, position, verify_crc=False)
                position += header.size_in_bytes
                if header.last_offset >= high_watermark:   # not committed yet: read it another time
                    break
                shown.extend(_entry(r, header.partition_leader_epoch, header.is_control) for r in records)
                offset = header.next_offset
            shown = shown[-RECORDS_SHOWN:]
            if offset == start:
                break
        self._read[node_id] = (log, offset, shown)
        return shown


def _entry(record: rb.Record, epoch: int, control: bool) -> dict[str, Any]:
    try:
        described = mr.describe_control(mr.decode_control(record.key, record.value)) if control \
            else mr.describe(mr.decode(record.value or b""))
    except ValueError as error:   # kafka-dump-log's decoder prints the same kind of line
        described = {"type": "UNKNOWN", "error": f"Error at {record.offset}, skipping. {error}"}
    return {"offset": record.offset, "epoch": epoch, "control": control, "record": described}


def _broker(broker: Any, registered: dict[int, Any]) -> dict[str, Any]:
    kraft = broker.kraft
    registration = registered.get(broker.id)
    return {"id": broker.id, "alive": broker.alive, "controller": bool(kraft.is_controller),
            "metadata_offset": kraft.image.offset, "broker_epoch": kraft.broker_epoch, "fenced": kraft.fenced,
            "registered_epoch": registration.epoch if registration is not None else -1,
            "registered_fenced": registration.fenced if registration is not None else True}
