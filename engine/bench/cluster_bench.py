"""Cluster: produce 100-byte records into a 3-broker cluster, replicated or not, beside the log alone.

Three runs, as in Kafka's 2014 benchmark: (a) RF=1 acks=1, (b) RF=3 acks=1, (c) RF=3 acks=all.
Records go in ~16 KiB batches, one produce request per batch, up to 5 requests in flight (the
producer's max.in.flight.requests.per.connection); a run ends when every request is answered
and the followers have caught up. Records/s is wall-clock time on this machine for all of it:
requests through the simulated network, the leader's append, followers' fetches and appends, HW
movement, acks. Beside them, the same batches appended to one Log (no cluster), in the same run.
End-to-end latency: one record at a time, RF=3 acks=all, from produce() until a consumer can
read it (below the leader's HW) — wall-clock ms (what this machine spends) and virtual ms (what
the modelled cluster takes: network delays, fetch round trips).

Failover, in each metadata mode measured: kill the leader of an RF=3 partition (min.insync.replicas
2) and time until a new leader has taken over and answered an acks=all produce — virtual ms (the
modelled cluster: ZooKeeper's session time-out, or KRaft's broker session time-out, then the
election and its propagation) and wall ms (what this machine spends simulating it). Both with
Kafka's defaults (zookeeper.session.timeout.ms 18 s; broker.session.timeout.ms 9 s).

`--metadata kraft` runs the produce runs and the failover in KRaft mode (3 brokers, combined
controllers) beside ZooKeeper mode's, in the same run, with the ratio of each KRaft figure to
its ZooKeeper counterpart.
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

from engine.cluster import Cluster
from engine.storage import record_batch as rb
from engine.storage.log import Log

IN_FLIGHT = 5
BATCH_BYTES = 16 * 1024
KAFKA_2014 = {"rf1_acks1_rps": 821_557, "rf3_acks1_rps": 786_980, "rf3_acksall_rps": 421_823}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--records", type=int, default=300_000, help="records per run (default 300,000)")
    parser.add_argument("--latency-samples", type=int, default=300)
    parser.add_argument("--dir", default=None)
    parser.add_argument("--metadata", default="zookeeper", choices=["zookeeper", "kraft"],
                        help="kraft: also run every produce run and the failover in KRaft mode, beside ZooKeeper's")
    parser.add_argument("--failovers", type=int, default=5, help="leader kills per mode (default 5)")


def run(args: argparse.Namespace) -> dict:
    scratch = tempfile.mkdtemp(prefix="bench-cluster-", dir=args.dir)
    try:
        records_per_batch = BATCH_BYTES // 110
        batches = max(1, args.records // records_per_batch)
        n = batches * records_per_batch
        payload = [(None, b"x" * 100)] * records_per_batch
        result = {"records": n, "batches": batches, "record_bytes": 100}
        result["log_only_rps"] = _log_only(scratch, payload, batches)
        modes = ["zookeeper"] + (["kraft"] if getattr(args, "metadata", "zookeeper") == "kraft" else [])
        for mode in modes:
            prefix = "" if mode == "zookeeper" else "kraft_"
            for name, rf, acks in (("rf1_acks1", 1, 1), ("rf3_acks1", 3, 1), ("rf3_acksall", 3, -1)):
                result[f"{prefix}{name}_rps"] = _produce_run(os.path.join(scratch, prefix + name), payload, batches,
                                                             rf, acks, mode)
            virtual_ms: list[float] = []
            wall_ms: list[float] = []
            for i in range(getattr(args, "failovers", 5)):
                v, w = _failover(os.path.join(scratch, f"{prefix}failover-{i}"), mode, seed=i)
                virtual_ms.append(v)
                wall_ms.append(w)
            result[f"{prefix}failover_virtual_ms"] = _pct(virtual_ms, 50)
            result[f"{prefix}failover_wall_ms"] = _pct(wall_ms, 50)
        wall, virtual = _latency(os.path.join(scratch, "latency"), args.latency_samples)
        result.update(e2e_p50_ms=_pct(wall, 50), e2e_p99_ms=_pct(wall, 99),
                      virtual_e2e_p50_ms=_pct(virtual, 50), virtual_e2e_p99_ms=_pct(virtual, 99))
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _log_only(scratch: str, payload: list, batches: int) -> float:
    encoded = [rb.encode_batch(payload, base_timestamp=1_700_000_000_000) for _ in range(batches)]
    log = Log(os.path.join(scratch, "log-only"), clock_ms=lambda: 1_700_000_000_000, fsync=False)
    started = time.perf_counter()
    for batch in encoded:
        log.append_batches(batch, leader_epoch=0)
    elapsed = time.perf_counter() - started
    log.close()
    return batches * len(payload) / elapsed


def _produce_run(data_dir: str, payload: list, batches: int, rf: int, acks: int, metadata: str = "zookeeper") -> float:
    cluster = Cluster(3, data_dir, seed=1, metadata=metadata)
    cluster.create_topic("bench", 1, rf, replica_assignment=[[1, 2, 3][:rf]])
    cluster.run_until_idle()
    started = time.perf_counter()
    sent = 0
    waiting: list = []
    while sent < batches or waiting:
        while sent < batches and len(waiting) < IN_FLIGHT:
            waiting.append(cluster.produce_batch("bench", 0, payload, acks=acks))
            sent += 1
        cluster.step()
        waiting = [r for r in waiting if r.acked is None]
    cluster.run_until_idle()
    elapsed = time.perf_counter() - started
    failed = [r.error for r in cluster.produced if not r.acked]
    leader = cluster.brokers[1].partitions[("bench", 0)]
    if failed or leader.high_watermark != batches * len(payload):
        raise AssertionError(f"bench run lost records: {failed[:3]} HW={leader.high_watermark}")
    cluster.close()
    return batches * len(payload) / elapsed


def _failover(data_dir: str, metadata: str, seed: int) -> tuple[int, float]:
    """Kill the partition's leader; (virtual ms, wall ms) until another broker leads it and has
    answered an acks=all produce."""
    cluster = Cluster(3, data_dir, seed=seed, metadata=metadata, config={"min.insync.replicas": 2})
    cluster.create_topic("failover", 1, 3, replica_assignment=[[1, 2, 3]])
    cluster.produce("failover", None, b"x" * 100, partition=0, acks=-1)
    cluster.run_until_idle()
    cluster.run_for(1000 + 500 * seed)      # kills at different points of the heartbeat cycle
    started, started_virtual = time.perf_counter(), cluster.now_ms
    cluster.kill_broker(1)

    def new_leader_ready() -> bool:
        state = cluster.metadata.partition_state("failover", 0)
        if state is None or state["leader"] in (1, -1):
            return False
        part = cluster.brokers[state["leader"]].partitions.get(("failover", 0))
        return part is not None and part.role == "leader" and part.leader_epoch == state["leader_epoch"]
    if not cluster.scheduler.run(until_ms=cluster.now_ms + 120_000, stop=new_leader_ready):
        raise AssertionError(f"{metadata}: no new leader within 120 s of virtual time")
    sent = cluster.produce("failover", None, b"after", partition=0, acks=-1)
    if not cluster.scheduler.run(until_ms=cluster.now_ms + 60_000, stop=lambda: sent.acked is not None):
        raise AssertionError(f"{metadata}: the produce after the failover was never answered")
    cluster.bus.drain()
    if not sent.acked:
        raise AssertionError(f"{metadata}: the produce after the failover failed: {sent.error}")
    result = cluster.now_ms - started_virtual, (time.perf_counter() - started) * 1000
    cluster.close()
    return result


def _latency(data_dir: str, samples: int) -> tuple[list[float], list[float]]:
    cluster = Cluster(3, data_dir, seed=2)
    cluster.create_topic("latency", 1, 3, replica_assignment=[[1, 2, 3]])
    cluster.run_until_idle()
    leader = cluster.brokers[1].partitions[("latency", 0)]
    wall: list[float] = []
    virtual: list[float] = []
    for _ in range(samples):
        target = leader.log_end_offset + 1
        started, started_virtual = time.perf_counter(), cluster.now_ms
        cluster.produce("latency", None, b"x" * 100, partition=0, acks=-1)
        def replicated(target: int = target) -> bool:
            return leader.high_watermark >= target

        if not cluster.scheduler.run(stop=replicated):
            raise AssertionError(f"the high watermark never reached {target}")
        cluster.bus.drain()   # Cluster.step's bookkeeping: the bus keeps events until drained
        wall.append((time.perf_counter() - started) * 1000)
        virtual.append(cluster.now_ms - started_virtual)
        cluster.run_for(7)  # spread the samples over the followers' fetch cycle
    cluster.close()
    return wall, virtual


def _pct(values: list[float], pct: int) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(pct / 100 * (len(ordered) - 1))))] if ordered else 0.0


def report(r: dict) -> str:
    base = r["log_only_rps"]
    lines = [f"cluster bench: {r['records']:,} records of 100 B per run, 3 brokers, "
             f"{r['batches']:,} batches of ~16 KiB, {IN_FLIGHT} in flight",
             f"  log only (same batches, one Log)   {base:>12,.0f} records/s"]
    for key, label in (("rf1_acks1_rps", "RF=1 acks=1"), ("rf3_acks1_rps", "RF=3 acks=1"),
                       ("rf3_acksall_rps", "RF=3 acks=all")):
        lines.append(f"  {label:<34} {r[key]:>12,.0f} records/s   {r[key] / base:.2f} of log only   "
                     f"(Kafka 2014 on 3 machines: {KAFKA_2014[key]:,})")
    lines.append(f"  end-to-end produce->readable, RF=3 acks=all: wall p50 {r['e2e_p50_ms']:.2f} ms, "
                 f"p99 {r['e2e_p99_ms']:.2f} ms; modelled p50 {r['virtual_e2e_p50_ms']:.0f} ms, "
                 f"p99 {r['virtual_e2e_p99_ms']:.0f} ms")
    lines.append(f"  leader kill -> new leader usable (ZooKeeper mode, median): "
                 f"{r['failover_virtual_ms']:,} virtual ms, {r['failover_wall_ms']:,.0f} wall ms")
    if "kraft_rf3_acks1_rps" in r:
        lines.append("  KRaft mode (combined controllers), beside ZooKeeper mode's in this run:")
        for key, label in (("rf1_acks1_rps", "RF=1 acks=1"), ("rf3_acks1_rps", "RF=3 acks=1"),
                           ("rf3_acksall_rps", "RF=3 acks=all")):
            lines.append(f"    {label:<32} {r['kraft_' + key]:>12,.0f} records/s   "
                         f"{r['kraft_' + key] / r[key]:.2f} of ZooKeeper mode's")
        lines.append(f"    leader kill -> new leader usable (median): {r['kraft_failover_virtual_ms']:,} virtual ms "
                     f"({r['kraft_failover_virtual_ms'] / r['failover_virtual_ms']:.2f} of ZooKeeper mode's), "
                     f"{r['kraft_failover_wall_ms']:,.0f} wall ms "
                     f"({r['kraft_failover_wall_ms'] / r['failover_wall_ms']:.2f} of ZooKeeper mode's)")
    return "\n".join(lines)
