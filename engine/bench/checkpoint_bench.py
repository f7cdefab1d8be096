"""Checkpoints: take and restore a running engine, beside replaying it from the start.

Two clusters, each built by a fixed list of commands (what the lab's command log replays):
(a) small: 3 brokers, `__consumer_offsets` created (50 partitions), a 3-partition topic and a
    consumer group of two polling members, run until the group is stable and idle;
(b) big: 9 brokers, a 60-partition topic (RF 3, 64 KiB segments unless --segment-bytes says
    otherwise), ~100k records of 100 B sent by the producer client (acks=all), flushed.
For each: `take` (wall ms, the pickled graph's bytes, files hard-linked and copied) and `restore`
into a new dir (wall ms), and beside them the baseline, measured in the same run: replaying the
same commands in a fresh cluster to the same step. Each restore is checked to continue exactly
(the same events as the original for a further stretch of virtual time).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from collections.abc import Callable

from engine import checkpoint
from engine.cluster import Cluster

CHECK_MS = 2_000  # virtual time both runs go on for after a restore, to check they agree


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--records", type=int, default=100_000, help="records in the big cluster (default 100,000)")
    parser.add_argument("--segment-bytes", type=int, default=64 * 1024,
                        help="segment.bytes of the big cluster's topic (default 64 KiB: most of each log is sealed)")
    parser.add_argument("--dir", default=None)


def run(args: argparse.Namespace) -> dict:
    scratch = tempfile.mkdtemp(prefix="bench-checkpoint-", dir=args.dir)
    try:
        return {"small": _measure(scratch, "small", _small),
                "big": _measure(scratch, "big", lambda d: _big(d, args.records, args.segment_bytes)),
                "records": args.records, "segment_bytes": args.segment_bytes}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _small(data_dir: str) -> Cluster:
    from engine.clients.consumer_app import PollLoop
    cluster = Cluster(3, data_dir, seed=1)
    cluster.ensure_offsets_topic()
    cluster.create_topic("t", 3, 3)
    for name in ("c1", "c2"):
        consumer = cluster.consumer(name, {"group.id": "g", "auto.offset.reset": "earliest"})
        consumer.subscribe(["t"])
        PollLoop(consumer, poll_interval_ms=100).start()
    cluster.run_for(10_000)
    return cluster


def _big(data_dir: str, records: int, segment_bytes: int) -> Cluster:
    cluster = Cluster(9, data_dir, seed=1)
    cluster.create_topic("t", 60, 3, config={"segment.bytes": segment_bytes})
    producer = cluster.producer("p")
    value = b"x" * 100
    for i in range(records):
        producer.send("t", f"k{i}", value)
    producer.flush()
    cluster.run_until_idle()
    return cluster


def _measure(scratch: str, name: str, build: Callable[[str], Cluster]) -> dict:
    cluster = build(os.path.join(scratch, f"{name}-original"))
    started = time.perf_counter()
    replayed = build(os.path.join(scratch, f"{name}-replay"))
    replay_ms = _ms(started)
    if replayed.scheduler.steps != cluster.scheduler.steps:
        raise AssertionError(f"{name}: a replay ran {replayed.scheduler.steps} steps, the original "
                             f"{cluster.scheduler.steps}")
    started = time.perf_counter()
    cp = checkpoint.take(cluster, os.path.join(scratch, f"{name}-checkpoint"))
    take_ms = _ms(started)
    started = time.perf_counter()
    restored = checkpoint.restore(cp, os.path.join(scratch, f"{name}-restored"))
    restore_ms = _ms(started)
    _check_same_future(name, cluster, restored)
    return {"steps": cp.step, "time_ms": cp.time_ms, "events": cp.events, "take_ms": take_ms,
            "restore_ms": restore_ms, "replay_ms": replay_ms, "state_bytes": cp.state_bytes,
            "linked_files": cp.files.linked_files, "linked_bytes": cp.files.linked_bytes,
            "copied_files": cp.files.copied_files, "copied_bytes": cp.files.copied_bytes}


def _check_same_future(name: str, original: Cluster, restored: Cluster) -> None:
    ahead = [json.dumps(e.to_dict(), sort_keys=True) for e in original.run_for(CHECK_MS)]
    again = [json.dumps(e.to_dict(), sort_keys=True) for e in restored.run_for(CHECK_MS)]
    if ahead != again:
        raise AssertionError(f"{name}: the restored cluster's next {CHECK_MS} ms differ from the original's")


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000


def report(r: dict) -> str:
    lines = ["checkpoint bench: take and restore, beside a replay from the start to the same step"]
    labels = {"small": "(a) 3 brokers, __consumer_offsets (50 partitions), a group of 2",
              "big": f"(b) 9 brokers, 60 partitions RF 3, {r['records']:,} records, "
                     f"segment.bytes {r['segment_bytes']:,}"}
    for key, label in labels.items():
        m = r[key]
        lines += [f"  {label}: {m['steps']:,} steps, {m['events']:,} events, {m['time_ms']:,} virtual ms",
                  f"    take     {m['take_ms']:>9.1f} ms   graph {m['state_bytes'] / 1024:,.0f} KiB; "
                  f"files: {m['linked_files']:,} linked ({m['linked_bytes'] / 2**20:,.1f} MiB), "
                  f"{m['copied_files']:,} copied ({m['copied_bytes'] / 2**20:,.2f} MiB)",
                  f"    restore  {m['restore_ms']:>9.1f} ms",
                  f"    replay   {m['replay_ms']:>9.1f} ms   (baseline)   "
                  f"restore is {m['replay_ms'] / max(m['restore_ms'], 1e-9):,.0f}x faster"]
    return "\n".join(lines)
