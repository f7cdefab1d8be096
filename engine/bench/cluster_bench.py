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


def run(args: argparse.Namespace) -> dict:
    scratch = tempfile.mkdtemp(prefix="bench-cluster-", dir=args.dir)
    try:
        records_per_batch = BATCH_BYTES // 110
        batches = max(1, args.records // records_per_batch)
        n = batches * records_per_batch
        payload = [(None, b"x" * 100)] * records_per_batch
        result = {"records": n, "batches": batches, "record_bytes": 100}
        result["log_only_rps"] = _log_only(scratch, payload, batches)
        for name, rf, acks in (("rf1_acks1", 1, 1), ("rf3_acks1", 3, 1), ("rf3_acksall", 3, -1)):
            result[f"{name}_rps"] = _produce_run(os.path.join(scratch, name), payload, batches, rf, acks)
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


def _produce_run(data_dir: str, payload: list, batches: int, rf: int, acks: int) -> float:
    cluster = Cluster(3, data_dir, seed=1)
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
    return "\n".join(lines)
