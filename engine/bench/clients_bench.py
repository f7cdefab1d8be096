"""Clients: one producer, one consumer, a group of three, beside the log alone.

Producer: acks=1, RF=1, 100-byte records with null keys, Kafka's default batching (batch.size
16 KiB, linger.ms 5, sticky partitioner), into a 12-partition topic on 3 brokers; records/s from
the first send() to the last acknowledgement, the producer's metadata fetched before the clock
starts (partitions_for, as a producer that has been running has it). Twice: one send() per
record, and send_batch() of 1,000 records at a time (same rules, one call) into a second
topic. Consumer: one member of a fresh group reading the
whole topic from the beginning (auto.offset.reset=earliest, max.poll.records 500). Group: three
members of another group over the same 12 partitions, polled in turn until every record was read.
All wall-clock on this machine, next to appending the same bytes to one Log in the same run.
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

from engine.bench.cluster_bench import _log_only
from engine.cluster import Cluster

KAFKA_2014 = {"consume_rps": 940_521, "group3_consume_rps": 2_615_968}
TARGETS = {"produce_batch_rps": 300_000}   # issue 14's target for the producer (Kafka 2014 measured none)
SEND_BATCH = 1_000


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--records", type=int, default=200_000, help="records to produce (default 200,000)")
    parser.add_argument("--dir", default=None)


def run(args: argparse.Namespace) -> dict:
    scratch = tempfile.mkdtemp(prefix="bench-clients-", dir=args.dir)
    try:
        n = args.records
        result = {"records": n, "log_only_rps": _log_only(scratch, [(None, b"x" * 100)] * 148, max(1, n // 148))}
        cluster = Cluster(3, os.path.join(scratch, "lab"), seed=1)
        cluster.create_topic("bench", 12, 1)
        cluster.create_topic("bench-batch", 12, 1)
        cluster.ensure_offsets_topic()  # created before the clock starts: 150 partition dirs
        cluster.run_until_idle()
        result["produce_rps"] = _produce(cluster, "bench", n, batched=False)
        result["produce_batch_rps"] = _produce(cluster, "bench-batch", n, batched=True)
        result["consume_rps"] = _consume(cluster, ["solo"], "solo-group", n)
        result["group3_consume_rps"] = _consume(cluster, ["g1", "g2", "g3"], "group-of-3", n)
        cluster.close()
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _produce(cluster: Cluster, topic: str, n: int, *, batched: bool) -> float:
    producer = cluster.producer(topic, {"acks": "1"})
    producer.partitions_for(topic)
    value = b"x" * 100
    started = time.perf_counter()
    if batched:
        chunk = [(None, value)] * SEND_BATCH
        records = []
        for start in range(0, n, SEND_BATCH):
            records += producer.send_batch(topic, chunk[:n - start])
    else:
        records = [producer.send(topic, None, value) for _ in range(n)]
    producer.flush()
    elapsed = time.perf_counter() - started
    failed = sum(1 for r in records if not r.acked)
    if failed:
        raise AssertionError(f"{failed} records were not acknowledged")
    return n / elapsed


def _consume(cluster: Cluster, members: list[str], group: str, n: int) -> float:
    consumers = [cluster.consumer(m, {"group.id": group, "auto.offset.reset": "earliest"}) for m in members]
    started = time.perf_counter()  # joining the group and the rebalance count: they are part of reading
    for consumer in consumers:
        consumer.subscribe(["bench"])
    seen = 0
    while seen < n:
        got = sum(len(c.poll(timeout_ms=100)) for c in consumers)
        seen += got
    elapsed = time.perf_counter() - started
    for consumer in consumers:
        consumer.close()
    return n / elapsed


def report(r: dict) -> str:
    base = r["log_only_rps"]
    lines = [f"clients bench: {r['records']:,} records of 100 B, 3 brokers, a 12-partition topic, RF=1",
             f"  log only (same bytes, one Log)     {base:>12,.0f} records/s"]
    for key, label in (("produce_rps", "producer, acks=1, send()"),
                       ("produce_batch_rps", f"producer, acks=1, send_batch({SEND_BATCH:,})"),
                       ("consume_rps", "one consumer"), ("group3_consume_rps", "group of 3 consumers")):
        anchor = (f"   (Kafka 2014: {KAFKA_2014[key]:,})" if key in KAFKA_2014
                  else f"   (target >= {TARGETS[key]:,})" if key in TARGETS else "")
        lines.append(f"  {label:<34} {r[key]:>12,.0f} records/s   {r[key] / base:.3f} of log only{anchor}")
    return "\n".join(lines)
