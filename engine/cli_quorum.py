"""kafka-metadata-quorum: the KRaft quorum as Kafka's MetadataQuorumCommand describes it.

    python -m engine.cli kafka-metadata-quorum describe --status
    python -m engine.cli kafka-metadata-quorum describe --replication

`--status` prints the leader, its epoch, the high watermark, the largest follower lag and the voters
and observers; `--replication` a row per replica, as the active controller knows it (DescribeQuorum):
its log end offset, its lag behind the leader, its role. The lab does not keep the fetch timestamps
Kafka prints (LastFetchTimestamp, LastCaughtUpTimestamp), so those columns are left out. A cluster in
ZooKeeper mode has no quorum: the tool says so.
"""
from __future__ import annotations

import argparse
from typing import Any, TextIO

from engine.cluster import Cluster


def describe_quorum(cluster: Cluster) -> dict:
    """DescribeQuorum's answer from the active controller's Raft client (-1 fields: no active controller)."""
    active = cluster.controller
    voters = sorted(cluster.cluster_config.voters)
    raft = next((r for node, r in _raft_hosts(cluster) if active is not None and node == active.node_id), None)
    if raft is None:
        return {"leader_id": -1, "leader_epoch": -1, "high_watermark": -1, "max_follower_lag": 0,
                "voters": voters, "observers": [], "replication": []}
    leader_end = raft.log_end_offset
    rows = []
    for node, end in sorted(raft.replica_states().items()):
        end = leader_end if node == raft.node_id else (end if end is not None else -1)
        role = "Leader" if node == raft.node_id else ("Follower" if node in voters else "Observer")
        rows.append({"node_id": node, "log_end_offset": end, "lag": max(0, leader_end - end) if end >= 0 else -1,
                     "status": role})
    lags = [r["lag"] for r in rows if r["status"] == "Follower" and r["lag"] >= 0]
    return {"leader_id": raft.node_id, "leader_epoch": raft.epoch, "high_watermark": raft.high_watermark,
            "max_follower_lag": max(lags, default=0), "voters": voters,
            "observers": sorted(r["node_id"] for r in rows if r["status"] == "Observer"), "replication": rows}


def _raft_hosts(cluster: Cluster) -> list[tuple[int, Any]]:
    hosts = [(b.id, b.kraft.raft) for b in cluster.brokers.values() if b.kraft is not None and b.kraft.raft]
    hosts += [(node_id, s.raft) for node_id, s in cluster.controller_nodes.items() if s.raft is not None]
    return hosts


def cmd_metadata_quorum(args: argparse.Namespace, cluster: Cluster, out: TextIO, err: TextIO) -> int:
    if not cluster.kraft:
        print("This lab cluster runs in ZooKeeper mode: it has no metadata quorum (create it with "
              "--metadata kraft).", file=err)
        return 1
    if args.action != "describe" or args.status == args.replication:
        print("Use: kafka-metadata-quorum describe --status | --replication", file=err)
        return 1
    quorum = describe_quorum(cluster)
    if args.status:
        print(f"LeaderId:               {quorum['leader_id']}", file=out)
        print(f"LeaderEpoch:            {quorum['leader_epoch']}", file=out)
        print(f"HighWatermark:          {quorum['high_watermark']}", file=out)
        print(f"MaxFollowerLag:         {quorum['max_follower_lag']}", file=out)
        print(f"CurrentVoters:          [{','.join(map(str, quorum['voters']))}]", file=out)
        print(f"CurrentObservers:       [{','.join(map(str, quorum['observers']))}]", file=out)
        return 0
    print(f"{'NodeId':<8}{'LogEndOffset':<14}{'Lag':<6}Status", file=out)
    for row in quorum["replication"]:
        print(f"{row['node_id']:<8}{row['log_end_offset']:<14}{row['lag']:<6}{row['status']}", file=out)
    return 0
