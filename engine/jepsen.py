"""A Jepsen-style checker: random schedules of produces and faults, then a verdict.

Each schedule (one seed) drives a fresh 3-broker cluster with a replicated topic: produces
interleaved with process crashes and restarts, paused fetchers, network partitions and pauses
of random length. At the end every fault is healed, the cluster is left to settle, and the
checker — which only reads the producer's record of acknowledgements and the replicas' final
logs, never the engine's internals — asks:
- lost: is every acknowledged record in the final log, at the offset it was acknowledged at?
- divergent: do all replicas hold the same records?
The safe setting (acks=all, min.insync.replicas=2, unclean election off, leader-epoch
truncation) must never fail; the unsafe ones (acks=1; unclean election on; high-watermark
truncation) must be caught failing — proof that the checker can fail.

In KRaft mode (`--metadata kraft`) the cluster has three dedicated controllers, and the schedules
also crash and restart them and cut links between controllers and between a broker and a
controller; one more question is asked at the end:
- metadata: do the voters' `__cluster_metadata` logs agree on their committed prefix?

    python -m engine.jepsen --schedules 1000 [--acks 1] [--unclean] [--truncation high-watermark]
                            [--metadata kraft]
"""
from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from dataclasses import dataclass, field

from engine.cluster import Cluster
from engine.common.errors import KafkaError
from engine.inspect.cluster import cluster_state

TOPIC = "jepsen"


@dataclass(frozen=True)
class Setting:
    acks: int = -1
    min_insync_replicas: int = 2
    unclean: bool = False
    truncation: str = "leader-epoch"
    metadata: str = "zookeeper"

    def config(self) -> dict:
        config: dict[str, object] = {"min.insync.replicas": self.min_insync_replicas,
                  "unclean.leader.election.enable": self.unclean,
                  # shorter timeouts than Kafka's defaults: more failovers per virtual minute
                  "zookeeper.session.timeout.ms": 6000, "replica.lag.time.max.ms": 10000,
                  "request.timeout.ms": 15000}
        if self.metadata == "kraft":
            config.update({"metadata": "kraft", "controller.mode": "dedicated", "controller.count": 3,
                           "broker.session.timeout.ms": 6000})
        return config


SAFE = Setting()


@dataclass
class Verdict:
    seed: int
    setting: Setting
    operations: list[str]
    lost: list[dict] = field(default_factory=list)        # acknowledged, then missing
    divergent: dict[str, list] = field(default_factory=dict)
    metadata_divergent: dict[int, int] = field(default_factory=dict)   # voter -> its committed prefix length
    settled: bool = True
    acknowledged: int = 0

    @property
    def ok(self) -> bool:
        return not self.lost and not self.divergent and not self.metadata_divergent and self.settled

    def describe(self) -> str:
        if self.ok:
            return f"seed {self.seed}: ok ({self.acknowledged} acknowledged records kept)"
        parts = [f"seed {self.seed}: FAILED ({self.setting})"]
        if not self.settled:
            parts.append("  the cluster did not settle after every fault was healed")
        for lost in self.lost:
            parts.append(f"  lost: {lost}")
        if self.divergent:
            parts.append(f"  replicas disagree: {self.divergent}")
        if self.metadata_divergent:
            parts.append(f"  metadata logs disagree within their committed prefixes: {self.metadata_divergent}")
        parts.append("  schedule: " + "; ".join(self.operations))
        return "\n".join(parts)


def run_schedule(seed: int, setting: Setting = SAFE, data_dir: str | None = None) -> Verdict:
    own_dir = data_dir is None
    data_dir = data_dir or tempfile.mkdtemp(prefix=f"jepsen-{seed}-")
    try:
        cluster = Cluster(3, data_dir, seed=seed, config=setting.config(), truncation=setting.truncation)
        cluster.create_topic(TOPIC, partitions=1, replication_factor=3)
        operations = _play(cluster, random.Random(seed), setting)
        settled = _heal_and_settle(cluster)
        verdict = check(cluster_state(cluster), setting, seed, operations)
        verdict.metadata_divergent = metadata_disagreement(cluster)
        verdict.settled = settled
        cluster.close()
        return verdict
    finally:
        if own_dir:
            shutil.rmtree(data_dir, ignore_errors=True)


def _play(cluster: Cluster, rng: random.Random, setting: Setting) -> list[str]:
    operations: list[str] = []
    brokers = sorted(cluster.brokers)
    controllers = sorted(cluster.controller_nodes)
    for i in range(rng.randint(10, 24)):
        if controllers and rng.random() < 0.3:
            _controller_fault(cluster, rng, controllers, brokers, operations)
        roll = rng.random()
        alive = [b for b in brokers if cluster.brokers[b].alive]
        dead = [b for b in brokers if not cluster.brokers[b].alive]
        try:
            if roll < 0.45:
                cluster.produce(TOPIC, b"k", f"v{i}".encode(), acks=setting.acks)
                operations.append(f"produce v{i}")
            elif roll < 0.57 and alive:
                victim = rng.choice(alive)
                cluster.kill_broker(victim, "process")
                operations.append(f"crash {victim}")
            elif roll < 0.67 and dead:
                back = rng.choice(dead)
                cluster.restart_broker(back)
                operations.append(f"restart {back}")
            elif roll < 0.74 and alive:
                b = rng.choice(alive)
                cluster.pause_fetcher(b)
                operations.append(f"pause fetcher {b}")
            elif roll < 0.80 and alive:
                b = rng.choice(alive)
                cluster.resume_fetcher(b)
                operations.append(f"resume fetcher {b}")
            elif roll < 0.88:
                a, b = rng.sample(brokers, 2)
                cluster.partition_network(a, b)
                operations.append(f"cut {a}-{b}")
            elif roll < 0.93:
                a, b = rng.sample(brokers, 2)
                cluster.heal_network(a, b)
                operations.append(f"heal {a}-{b}")
        except KafkaError as error:
            operations.append(f"({error.kafka_name})")
        wait = rng.choice([0, 1, 3, 20, 200, 1000, 5000, 15000])
        cluster.run_for(wait)
        operations.append(f"wait {wait}")
    return operations


def _controller_fault(cluster: Cluster, rng: random.Random, controllers: list[int], brokers: list[int],
                      operations: list[str]) -> None:
    """KRaft: crash or restart a controller, or cut or heal a link to one (a quorum partition)."""
    roll = rng.random()
    down = [c for c in controllers if not cluster.controller_nodes[c].alive]
    up = [c for c in controllers if cluster.controller_nodes[c].alive]
    if roll < 0.3 and up:
        victim = rng.choice(up)
        cluster.kill_controller_node(victim)
        operations.append(f"crash controller {victim}")
    elif roll < 0.55 and down:
        back = rng.choice(down)
        cluster.restart_controller_node(back)
        operations.append(f"restart controller {back}")
    elif roll < 0.8:
        a = rng.choice(controllers)
        b = rng.choice([c for c in controllers if c != a] + brokers)
        cluster.partition_network(a, b)
        operations.append(f"cut {a}-{b}")
    else:
        a = rng.choice(controllers)
        b = rng.choice([c for c in controllers if c != a] + brokers)
        cluster.heal_network(a, b)
        operations.append(f"heal {a}-{b}")


def metadata_disagreement(cluster: Cluster) -> dict[int, int]:
    """KRaft: {} when every voter's committed metadata records agree (see `disagreement`). Always {}
    in ZooKeeper mode."""
    return disagreement(committed_metadata(cluster))


def committed_metadata(cluster: Cluster) -> dict[int, list[tuple[int, bytes | None]]]:
    """Each dedicated controller's committed `__cluster_metadata` records: (offset, value) below its HW."""
    logs = {}
    for node_id, server in sorted(cluster.controller_nodes.items()):
        raft = server.raft
        logs[node_id] = [(r.offset, r.value) for r in raft.log.records_from(0) if r.offset < raft.high_watermark]
    return logs


def disagreement(logs: dict[int, list[tuple[int, bytes | None]]]) -> dict[int, int]:
    """{} when every log is a prefix of the longest one; else each log's length."""
    if not logs:
        return {}
    longest = max(logs.values(), key=len)
    if all(log == longest[:len(log)] for log in logs.values()):
        return {}
    return {node: len(log) for node, log in logs.items()}


def _heal_and_settle(cluster: Cluster) -> bool:
    brokers = sorted(cluster.brokers)
    nodes = [cluster._node(n) for n in brokers + sorted(cluster.controller_nodes)]
    for one in nodes:
        for other in nodes:
            if one < other and cluster.network.is_cut(one, other):
                cluster.heal_network(one, other)
    for node_id, server in sorted(cluster.controller_nodes.items()):
        if not server.alive:
            cluster.restart_controller_node(node_id)
    for b in brokers:
        if not cluster.brokers[b].alive:
            cluster.restart_broker(b)
    for b in brokers:
        cluster.resume_fetcher(b)
    cluster.run_until_idle(max_ms=300_000)
    # produce answers still in flight settle too (a time-out is an answer)
    cluster.run_for(cluster.broker_config.request_timeout_ms)
    cluster.run_until_idle(max_ms=300_000)
    return cluster.is_idle()


def check(state: dict, setting: Setting, seed: int = -1, operations: list[str] | None = None) -> Verdict:
    """The verdict from the producer's acknowledgements and the replicas' final logs only."""
    verdict = Verdict(seed, setting, operations or [])
    part = state["partitions"][0]
    logs = {replica: [(r["offset"], r["value"]) for r in s.get("records", [])]
            for replica, s in part["replica_states"].items() if s.get("alive")}
    distinct = {tuple(log) for log in logs.values()}
    if len(distinct) > 1:
        verdict.divergent = {replica: [v for _, v in log] for replica, log in logs.items()}
    leader = str(part["leader"])
    committed = dict(logs.get(leader, [])[:max(part["high_watermark"], 0)])
    for record in state["produced"]:
        if record["acked"] and record["acks"] != 0:
            verdict.acknowledged += 1
            if committed.get(record["offset"]) != record["value"]:
                verdict.lost.append({"value": record["value"], "acked_offset": record["offset"],
                                     "found": committed.get(record["offset"])})
    return verdict


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.jepsen", description=__doc__.splitlines()[0])
    parser.add_argument("--schedules", type=int, default=300)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--acks", type=int, default=-1, choices=[-1, 0, 1])
    parser.add_argument("--unclean", action="store_true")
    parser.add_argument("--min-insync", type=int, default=2)
    parser.add_argument("--truncation", default="leader-epoch", choices=["leader-epoch", "high-watermark"])
    parser.add_argument("--metadata", default="zookeeper", choices=["zookeeper", "kraft"])
    parser.add_argument("--verbose", action="store_true", help="print every verdict, not only failures")
    args = parser.parse_args(argv)
    setting = Setting(args.acks, args.min_insync, args.unclean, args.truncation, args.metadata)
    failures = 0
    for seed in range(args.first_seed, args.first_seed + args.schedules):
        verdict = run_schedule(seed, setting)
        if not verdict.ok or args.verbose:
            print(verdict.describe())
        failures += not verdict.ok
    print(f"{args.schedules - failures} passed, {failures} failed ({setting})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
