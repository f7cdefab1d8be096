"""Compression end to end: a producer's compression.type on the wire and on every replica's disk,
a topic's compression.type making the leader keep or recompress the batch (LogValidator), and
what a consumer reads back either way."""
from __future__ import annotations

import glob
import io
import os

import pytest

from engine import Cluster
from engine.clients.producer import ProducerConfigError
from engine.cluster import ClusterError
from engine.storage import record_batch as rb
from engine.storage.errors import InvalidConfigError
from engine.tools import dump_log

CODECS = ["none", "gzip", "snappy", "lz4", "zstd"]
VALUES = [f"order {i}: the same words again and again".encode() for i in range(60)]


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(3, str(tmp_path / "lab"), seed=11,
                config={"offsets.topic.num.partitions": 1, "group.initial.rebalance.delay.ms": 0})
    yield c
    c.close()


def produce(cluster: Cluster, topic: str, config: dict) -> None:
    producer = cluster.producer("p", {"linger.ms": 50, **config})
    records = [producer.send(topic, f"k{i}", value, partition=0) for i, value in enumerate(VALUES)]
    producer.flush()
    assert all(r.acked for r in records), [r.error for r in records if not r.acked]
    cluster.run_until_idle()   # the followers fetch what the leader wrote


def consume(cluster: Cluster, topic: str) -> list[tuple[bytes | None, bytes | None]]:
    consumer = cluster.consumer("c", {"group.id": "g", "auto.offset.reset": "earliest"})
    consumer.subscribe([topic])
    out: list = []
    end = consumer.now_ms + 30_000
    while len(out) < len(VALUES) and consumer.now_ms < end:
        out.extend(consumer.poll(timeout_ms=end - consumer.now_ms))
    return [(r.key, r.value) for r in out]


def replica_batches(cluster: Cluster, topic: str) -> dict[int, list[tuple[rb.BatchHeader, bytes]]]:
    """Every replica's batches of partition 0, read from its segment files: {broker: [(header, bytes)]}."""
    found = {}
    for broker_id, broker in cluster.brokers.items():
        part = broker.partitions.get((topic, 0))
        if part is None:
            continue
        batches = []
        for path in sorted(glob.glob(os.path.join(part.log.path, "*.log"))):
            data = open(path, "rb").read()
            batches += [(h, data[pos:pos + h.size_in_bytes]) for pos, h in rb.iter_batches(data)]
        found[broker_id] = batches
    return found


def codecs_on_disk(cluster: Cluster, topic: str) -> dict[int, set[str]]:
    return {b: {rb.COMPRESSION_NAMES[h.compression] for h, _ in batches}
            for b, batches in replica_batches(cluster, topic).items()}


@pytest.mark.parametrize("codec", CODECS)
def test_a_producer_s_codec_reaches_every_replica_and_the_consumer_reads_the_same_records(cluster, codec):
    cluster.create_topic("t", 1, 3)
    produce(cluster, "t", {"compression.type": codec})
    assert codecs_on_disk(cluster, "t") == {1: {codec}, 2: {codec}, 3: {codec}}
    replicas = replica_batches(cluster, "t")
    assert replicas[1] == replicas[2] == replicas[3]   # followers copy the leader's bytes
    assert all(rb.batch_crc_ok(data) for _, data in replicas[1])
    assert consume(cluster, "t") == [(f"k{i}".encode(), v) for i, v in enumerate(VALUES)]


def test_compressed_batches_are_smaller_on_the_wire_and_the_producer_learns_the_ratio(cluster):
    cluster.create_topic("t", 1, 1)
    sizes = {}
    for codec in ("none", "zstd"):
        events: list = []
        cluster.subscribe(events.append)
        producer = cluster.producer(f"p-{codec}", {"compression.type": codec, "linger.ms": 50})
        for value in VALUES:
            producer.send("t", None, value, partition=0)
        producer.flush()
        sizes[codec] = sum(e.size_in_bytes for e in events if e.kind == "producer_batch_sent")
        if codec == "zstd":
            assert producer.accumulator.compression_ratios["t"] < 1.0   # CompressionRatioEstimator
    assert sizes["zstd"] * 4 < sizes["none"]


def test_a_compressed_batch_holds_more_records_once_the_ratio_is_learnt(cluster):
    """batch.size bounds the estimated compressed size (records x ratio x 1.05), as Kafka's does."""
    cluster.create_topic("t", 1, 1)
    producer = cluster.producer("p", {"compression.type": "gzip", "batch.size": 2000, "linger.ms": 10_000})
    sent: list = []
    cluster.subscribe(lambda e: sent.append(e) if e.kind == "producer_batch_sent" else None)
    for _ in range(3):
        for value in VALUES:
            producer.send("t", None, value, partition=0)
        producer.flush()
    counts = [e.records_count for e in sent]
    assert counts[0] < max(counts)     # the first batch is cut at batch.size uncompressed x 1.05
    assert all(e.size_in_bytes <= 2000 for e in sent)
    # each batch compressed better than estimated: the estimate comes down by 0.005 a batch
    assert producer.accumulator.compression_ratios["t"] == pytest.approx(1.0 - 0.005 * len(sent))


def test_a_topic_codec_other_than_the_producer_s_makes_the_leader_recompress(cluster):
    cluster.create_topic("t", 1, 3, config={"compression.type": "zstd"})
    produce(cluster, "t", {"compression.type": "gzip"})
    assert codecs_on_disk(cluster, "t") == {1: {"zstd"}, 2: {"zstd"}, 3: {"zstd"}}
    replicas = replica_batches(cluster, "t")
    assert replicas[1] == replicas[2] == replicas[3]
    for header, data in replicas[1]:
        assert rb.batch_crc_ok(data) and header.producer_id >= 0 and header.partition_leader_epoch >= 0
    offsets = [(h.base_offset, h.last_offset) for h, _ in replicas[1]]
    assert offsets[0][0] == 0 and offsets[-1][1] == len(VALUES) - 1
    assert all(a[1] + 1 == b[0] for a, b in zip(offsets, offsets[1:]))   # offsets assigned as ever
    assert consume(cluster, "t") == [(f"k{i}".encode(), v) for i, v in enumerate(VALUES)]


@pytest.mark.parametrize(("topic_codec", "on_disk"), [("producer", "gzip"), ("gzip", "gzip"),
                                                       ("uncompressed", "none"), ("lz4", "lz4")])
def test_the_topic_codec_decides_what_a_gzip_producer_s_batches_become(cluster, topic_codec, on_disk):
    cluster.create_topic("t", 1, 2, config={"compression.type": topic_codec})
    produce(cluster, "t", {"compression.type": "gzip"})
    assert list(codecs_on_disk(cluster, "t").values()) == [{on_disk}, {on_disk}]


def test_an_uncompressed_producer_to_a_snappy_topic_is_compressed_by_the_broker(cluster):
    cluster.create_topic("t", 1, 2, config={"compression.type": "snappy"})
    produce(cluster, "t", {})
    assert list(codecs_on_disk(cluster, "t").values()) == [{"snappy"}, {"snappy"}]
    assert consume(cluster, "t") == [(f"k{i}".encode(), v) for i, v in enumerate(VALUES)]


def test_the_topic_level_is_used_when_the_broker_recompresses(cluster):
    cluster.create_topic("fast", 1, 1, config={"compression.type": "gzip", "compression.gzip.level": 1})
    cluster.create_topic("best", 1, 1, config={"compression.type": "gzip", "compression.gzip.level": 9})
    for topic in ("fast", "best"):
        produce(cluster, topic, {"compression.type": "none", "enable.idempotence": False, "acks": 1})
    size = {t: sum(h.size_in_bytes for h, _ in next(iter(replica_batches(cluster, t).values())))
            for t in ("fast", "best")}
    assert size["best"] < size["fast"]


def test_a_broker_wide_compression_type_is_every_topic_s_default(tmp_path):
    c = Cluster(2, str(tmp_path / "lab"), seed=3, config={"compression.type": "lz4"})
    try:
        c.create_topic("t", 1, 2)
        produce(c, "t", {"compression.type": "zstd"})
        assert list(codecs_on_disk(c, "t").values()) == [{"lz4"}, {"lz4"}]
    finally:
        c.close()


def test_a_bad_topic_codec_is_refused_naming_the_field_and_nothing_is_created(cluster):
    for config in ({"compression.type": "none"}, {"compression.type": "brotli"},
                   {"compression.type": "zstd", "compression.zstd.level": 99}):
        with pytest.raises((ClusterError, InvalidConfigError), match="compression"):
            cluster.create_topic("t", 1, 1, config=config)
        assert "t" not in cluster.list_topics()


def test_a_bad_producer_codec_is_refused_naming_the_field(cluster):
    with pytest.raises(ProducerConfigError, match="configuration compression.type"):
        cluster.producer("p", {"compression.type": "brotli"})
    with pytest.raises(ProducerConfigError, match="configuration compression.lz4.level"):
        cluster.producer("p", {"compression.type": "lz4", "compression.lz4.level": 40})


def test_dump_log_shows_each_batch_s_codec(cluster):
    cluster.create_topic("t", 1, 1, config={"compression.type": "zstd"})
    produce(cluster, "t", {"compression.type": "gzip"})
    path = sorted(glob.glob(os.path.join(cluster.brokers[1].partitions[("t", 0)].log.path, "*.log")))[0]
    out = io.StringIO()
    dump_log.dump_file(path, out, print_data_log=True)
    lines = [line for line in out.getvalue().splitlines() if line.startswith("baseOffset:")]
    assert lines and all(" compresscodec: zstd crc: " in line for line in lines)
    assert "payload: order 0: the same words again and again" in out.getvalue()
