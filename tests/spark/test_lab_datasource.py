"""The `lab` PySpark data source against a lab cluster served by the read API (real Spark)."""
from __future__ import annotations

import json
import tempfile

import pytest

from engine import Cluster
from engine.read_api_server import ReadApiServer

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    cluster = Cluster(3, str(tmp_path_factory.mktemp("lab")), seed=11)
    cluster.create_topic("clicks", 3, 3)
    cluster.create_topic("views", 1, 1)
    for i in range(30):
        cluster.produce("clicks", None, f"c{i}", partition=i % 3)
    for i in range(5):
        cluster.produce("views", f"user{i}", f"v{i}", headers=[("source", b"web")])
    cluster.run_until_idle()
    with ReadApiServer(cluster, "sess") as server:
        yield cluster, server
    cluster.close()


def reader(spark, server, **options):
    r = spark.read.format("lab").option("lab.url", server.url).option("lab.session", "sess")
    for k, v in options.items():
        r = r.option(k, v if isinstance(v, str) else json.dumps(v))
    return r.load()


def test_batch_reads_every_committed_record_with_kafka_s_columns(spark, lab):
    _, server = lab
    df = reader(spark, server, subscribe="clicks,views")
    assert [f.name for f in df.schema.fields] == ["key", "value", "topic", "partition", "offset", "timestamp",
                                                  "timestampType", "headers"]
    rows = df.collect()
    assert len(rows) == 35
    views = sorted((r.offset, r.key, r.value, [(h.key, h.value) for h in r.headers])
                   for r in rows if r.topic == "views")
    assert views[0] == (0, b"user0", b"v0", [("source", b"web")])
    counts = {r["partition"]: r["count"] for r in df.where("topic = 'clicks'").groupBy("partition").count().collect()}
    assert counts == {0: 10, 1: 10, 2: 10}


def test_offsets_options_bound_the_read(spark, lab):
    _, server = lab
    df = reader(spark, server, subscribe="clicks", startingOffsets={"clicks": {"0": 4, "1": -2}},
                endingOffsets={"clicks": {"0": 6, "1": 2, "2": -1}})
    got = sorted((r.partition, r.offset) for r in df.collect())
    assert got == [(0, 4), (0, 5), (1, 0), (1, 1)] + [(2, o) for o in range(10)]


def test_a_pattern_subscription_reads_matching_topics(spark, lab):
    _, server = lab
    assert {r.topic for r in reader(spark, server, subscribePattern="vie.*").collect()} == {"views"}


def test_only_committed_records_are_read(spark, lab):
    cluster, server = lab
    leader = cluster.leader_of("clicks", 0)
    followers = [b for b in cluster.describe_topic("clicks")["partitions"][0]["replicas"] if b != leader]
    for b in followers:
        cluster.pause_fetcher(b)
    with server.lock:
        cluster.produce("clicks", None, "not committed", partition=0, acks=1)
        cluster.run_for(50)
    values = [r.value for r in reader(spark, server, subscribe="clicks").where("partition = 0").collect()]
    assert b"not committed" not in values and len(values) == 10
    with server.lock:
        for b in followers:
            cluster.resume_fetcher(b)
        cluster.run_until_idle()


@pytest.mark.parametrize("options, message", [
    ({}, "Exactly one of the options"),
    ({"subscribe": "clicks", "subscribePattern": "x"}, "Exactly one of the options"),
    ({"subscribe": "clicks", "startingOffsets": "{nope"}, "not valid JSON"),
    ({"subscribe": "clicks", "maxOffsetsPerTrigger": "-3"}, "positive integer"),
    ({"subscribe": "clicks", "colour": "blue"}, "Unknown option"),
])
def test_bad_options_fail_at_analysis_with_a_clear_error(spark, lab, options, message):
    _, server = lab
    with pytest.raises(Exception, match=message):
        reader(spark, server, **options).schema  # noqa: B018 - reading the schema is what runs the analysis


def test_fail_on_data_loss_fails_or_skips_when_retention_deleted_the_start(spark, tmp_path):
    cluster = Cluster(1, str(tmp_path / "lab"), seed=2)
    cluster.create_topic("short", 1, 1, config={"segment.bytes": 200, "retention.bytes": 250})
    for i in range(12):
        cluster.produce("short", None, f"record-{i:02d}")
        cluster.run_until_idle()
    cluster.run_for(300_000)  # the retention check runs every 5 minutes
    start = cluster.brokers[1].partitions[("short", 0)].log.log_start_offset
    assert start > 0
    with ReadApiServer(cluster, "sess") as server:
        def read(fail):
            return reader(spark, server, subscribe="short", startingOffsets={"short": {"0": 0}},
                          failOnDataLoss=fail)
        with pytest.raises(Exception, match="Data loss: offset 0 of short-0 is gone"):
            read("true").collect()
        assert [r.offset for r in read("false").orderBy("offset").collect()][0] == start
    cluster.close()


def test_streaming_reads_micro_batches_and_resumes_from_its_checkpoint(spark, lab):
    cluster, server = lab
    checkpoint, output = tempfile.mkdtemp(), tempfile.mkdtemp()

    def run_once():
        query = (spark.readStream.format("lab").option("lab.url", server.url).option("lab.session", "sess")
                 .option("subscribe", "views").option("startingOffsets", "earliest")
                 .option("maxOffsetsPerTrigger", "2").load()
                 .selectExpr("CAST(value AS STRING) AS value", "offset")
                 .writeStream.format("json").option("path", output)
                 .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
        query.awaitTermination()
        return query

    def sink():
        return sorted((r.offset, r.value) for r in spark.read.schema("value string, offset long").json(output).collect())

    first = run_once()
    assert sink() == [(i, f"v{i}") for i in range(5)]
    assert sum(1 for p in first.recentProgress if p["numInputRows"]) == 3  # at most 2 records per trigger
    with server.lock:
        cluster.produce("views", "user9", "v9")
        cluster.run_until_idle()
    run_once()  # the same checkpoint: only the new record, no gap, no duplicate
    assert sink() == [(i, f"v{i}") for i in range(5)] + [(5, "v9")]


def _logged_rows(cluster, topic: str, partitions: int) -> list[tuple]:
    """What the leaders' logs hold, decoded by record_batch: the columns the source must return."""
    from engine.storage import record_batch as rb
    rows = []
    for p in range(partitions):
        log = cluster.brokers[cluster.leader_of(topic, p)].partitions[(topic, p)].log
        data = log.read_batches(0, 1 << 30).records
        for position, header in rb.iter_batches(data):
            for r in rb.decode_batch(data, position)[1]:
                rows.append((topic, p, r.offset, r.key, r.value, r.timestamp, header.timestamp_type,
                             [(h.key, h.value) for h in r.headers] or None))  # Spark's: null if none
    return sorted(rows)


def test_every_column_matches_the_log_over_many_fetches_and_split_ranges(spark, tmp_path):
    cluster = Cluster(1, str(tmp_path / "lab"), seed=5)
    cluster.create_topic("appended", 1, 1, config={"message.timestamp.type": "LogAppendTime"})
    cluster.create_topic("created", 1, 1)
    big = b"v" * 4_000   # 12 MB: two ranges of 6 MB, each read in more than one 4 MiB fetch
    for start in range(0, 3_000, 64):   # 64-record batches: the split at 1500 falls inside one
        cluster.produce_batch("appended", 0,
                              [(None if i % 7 else b"k%d" % i, None if i % 11 == 0 else big)
                               for i in range(start, min(start + 64, 3_000))])
        cluster.run_until_idle()
    for i in range(20):
        cluster.produce("created", f"k{i}" if i % 3 else None, None if i % 4 == 0 else f"v{i}",
                        headers=[("n", str(i).encode()), ("none", None)] if i % 2 else None)
        cluster.run_until_idle()
    with ReadApiServer(cluster, "sess") as server:
        df = reader(spark, server, subscribe="appended,created", minPartitions="2")
        got = sorted((r.topic, r.partition, r.offset, r.key, r.value, r.ts, r.timestampType,
                      r.headers and [(h.key, h.value) for h in r.headers])
                     for r in df.selectExpr("*", "unix_millis(timestamp) AS ts").collect())
    assert got == _logged_rows(cluster, "appended", 1) + _logged_rows(cluster, "created", 1)
    assert {row[6] for row in got if row[0] == "appended"} == {1}
    cluster.close()
