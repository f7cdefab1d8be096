from __future__ import annotations

import pytest

from engine import Cluster
from engine.cluster import ClusterError
from engine.read_api import list_partitions, read_committed
from engine.storage import record_batch as rb


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(3, str(tmp_path / "lab"), seed=3)
    c.create_topic("clicks", 2, 3)
    c.create_topic("views", 1, 1)
    for i in range(6):
        c.produce("clicks", None, f"c{i}", partition=i % 2)
    c.run_until_idle()
    yield c
    c.close()


def _decode(data: bytes) -> list[rb.Record]:
    out, position = [], 0
    while position < len(data):
        header, records = rb.decode_batch(data, position)
        out += records
        position += header.size_in_bytes
    return out


def test_it_lists_partitions_with_log_start_and_high_watermark(cluster):
    infos = list_partitions(cluster, ["clicks"])
    assert [(i.partition, i.log_start_offset, i.high_watermark) for i in infos] == [(0, 0, 3), (1, 0, 3)]
    assert [i.topic for i in list_partitions(cluster, pattern="cl.*")] == ["clicks", "clicks"]
    assert list_partitions(cluster, pattern="c") == []  # a pattern must match the whole name


def test_it_serves_whole_batches_below_the_high_watermark_only(cluster):
    leader = cluster.leader_of("clicks", 0)
    for follower in cluster.describe_topic("clicks")["partitions"][0]["replicas"]:
        if follower != leader:
            cluster.pause_fetcher(follower)
    cluster.produce("clicks", None, "uncommitted", partition=0, acks=1)
    cluster.run_for(50)
    batch = read_committed(cluster, "clicks", 0, 0)
    assert [r.value for r in _decode(batch.records)] == [b"c0", b"c2", b"c4"]
    assert batch.high_watermark == 3 and batch.next_offset == 3


def test_reading_past_the_high_watermark_or_an_unknown_topic_fails_clearly(cluster):
    with pytest.raises(ClusterError, match=r"committed records are \[0, 3\)") as error:
        read_committed(cluster, "clicks", 0, 4)
    assert error.value.kafka_name == "OFFSET_OUT_OF_RANGE"
    with pytest.raises(ClusterError) as error:
        read_committed(cluster, "nope", 0, 0)
    assert error.value.kafka_name == "UNKNOWN_TOPIC_OR_PARTITION"
    assert read_committed(cluster, "clicks", 0, 3).records == b""
