"""Compression: a producer's throughput and bytes on the wire with each compression.type, against none.

One producer, acks=1, send_batch() of 1,000 records at a time (Kafka's default batching: batch.size
16 KiB, linger.ms 5), into a 6-partition topic on 3 brokers, RF=1, the topic's compression.type
`producer` (the leader keeps the batch). Records are 100-byte JSON-like values with null keys (a
user, a page, a counter: text that compresses as event logs do, not a run of one byte). For each
codec: records/s from the first send to the last acknowledgement (the best of a few rounds, the
codecs taking turns), and the produce requests' record bytes (the sender's byte-total); both as a
ratio to `none` measured in the same run, so machines compare. Then the same for a topic whose
compression.type is zstd while the producer sends gzip: the leader decompresses and recompresses
every batch (LogValidator's rebuild).
"""
from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time

from engine.cluster import Cluster
from engine.storage.compression import PRODUCER_COMPRESSION_TYPES

SEND_BATCH = 1_000
RECOMPRESS = "gzip->zstd"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--records", type=int, default=30_000, help="records per codec and round (default 30,000)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds over every codec; the best of each (default 3)")
    parser.add_argument("--dir", default=None)


def run(args: argparse.Namespace) -> dict:
    scratch = tempfile.mkdtemp(prefix="bench-compression-", dir=args.dir)
    try:
        cluster = Cluster(3, os.path.join(scratch, "lab"), seed=1)
        values = [_value(i) for i in range(SEND_BATCH)]
        result: dict = {"records": args.records, "rounds": args.rounds, "codecs": {}}
        cases = [(codec, codec, "producer") for codec in PRODUCER_COMPRESSION_TYPES] + [(RECOMPRESS, "gzip", "zstd")]
        for name, _, topic_codec in cases:
            cluster.create_topic(_topic(name), 6, 1, config={"compression.type": topic_codec})
        cluster.run_until_idle()
        for round_ in range(args.rounds):   # codecs take turns, so a busy moment of the machine hits them alike
            for name, codec, _ in cases:
                figures = _produce(cluster, _topic(name), codec, values, args.records, round_)
                best = result["codecs"].setdefault(name, figures)
                best["rps"] = max(best["rps"], figures["rps"])
        cluster.close()
        return result
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _topic(case: str) -> str:
    return f"bench-{case.replace('>', '')}"


def _value(i: int) -> bytes:
    text = f'{{"user":"u{i * 7919 % 1000:04d}","page":"/items/{i * 31 % 97}","event":"view","n":{i}}}'
    return text.ljust(100).encode()


def _produce(cluster: Cluster, topic: str, codec: str, values: list[bytes], n: int, round_: int) -> dict:
    producer = cluster.producer(f"{topic}-{round_}", {"acks": "1", "compression.type": codec})
    producer.partitions_for(topic)
    chunk = [(None, v) for v in values]
    started = time.perf_counter()
    records = []
    for start in range(0, n, SEND_BATCH):
        records += producer.send_batch(topic, chunk[:n - start])
    producer.flush()
    elapsed = time.perf_counter() - started
    failed = sum(1 for r in records if not r.acked)
    if failed:
        raise AssertionError(f"{codec}: {failed} records were not acknowledged")
    return {"rps": n / elapsed, "wire_bytes": producer.sender.stats["byte-total"]}


def report(r: dict) -> str:
    codecs = r["codecs"]
    base = codecs["none"]
    lines = [f"compression bench: {r['records']:,} records of 100 B per codec, best of {r['rounds']} rounds, "
             f"send_batch({SEND_BATCH:,}), acks=1, 3 brokers, RF=1",
             f"  {'compression.type':<24} {'records/s':>12} {'of none':>8} {'wire bytes':>12} {'of none':>8}"]
    for name, figures in codecs.items():
        label = f"{name} (topic zstd)" if name == RECOMPRESS else name
        lines.append(f"  {label:<24} {figures['rps']:>12,.0f} {figures['rps'] / base['rps']:>8.3f} "
                     f"{figures['wire_bytes']:>12,} {figures['wire_bytes'] / base['wire_bytes']:>8.3f}")
    return "\n".join(lines)
