"""The consumer's poll(): positions, offset resets, seek, pause, fetch limits, commits, errors."""
from __future__ import annotations

import pytest

from engine import Cluster
from engine.clients.consumer_state import (
    CommitFailedError,
    ConsumerConfig,
    IllegalStateError,
    KafkaClientError,
    NoOffsetForPartitionError,
)
from engine.groups.assignors import TopicPartition
from engine.storage.errors import InvalidConfigError

T0, T1 = TopicPartition("t", 0), TopicPartition("t", 1)


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(3, str(tmp_path / "lab"), seed=21,
                config={"offsets.topic.num.partitions": 3, "group.initial.rebalance.delay.ms": 0})
    c.create_topic("t", 2, 3)
    yield c
    c.close()


def produce(cluster, partition, *values):
    for v in values:
        cluster.produce("t", None, v, partition=partition)
    cluster.run_until_idle()


def poll_until(consumer, count, timeout_ms=20000):
    out = []
    end = consumer.now_ms + timeout_ms
    while len(out) < count and consumer.now_ms < end:
        out.extend(consumer.poll(timeout_ms=end - consumer.now_ms))
    return out


def consumer(cluster, name="c1", **config):
    settings = {"group.id": "g", "auto.offset.reset": "earliest"}
    settings.update({k.replace("_", "."): v for k, v in config.items()})
    return cluster.consumer(name, settings)


def test_the_defaults_are_kafka_s():
    c = ConsumerConfig()
    assert (c.max_poll_records, c.fetch_min_bytes, c.fetch_max_wait_ms, c.fetch_max_bytes,
            c.max_partition_fetch_bytes) == (500, 1, 500, 52428800, 1048576)
    assert (c.auto_offset_reset, c.enable_auto_commit, c.auto_commit_interval_ms) == ("latest", True, 5000)
    assert (c.session_timeout_ms, c.heartbeat_interval_ms, c.max_poll_interval_ms) == (45000, 3000, 300000)
    assert c.partition_assignment_strategy == ("range", "cooperative-sticky")
    assert c.metadata_max_age_ms == 300000 and c.request_timeout_ms == 30000


def test_bad_configs_are_refused(cluster):
    with pytest.raises(InvalidConfigError, match="Unknown consumer config"):
        cluster.consumer("x", {"group.idd": "g"})
    with pytest.raises(InvalidConfigError, match="auto.offset.reset"):
        cluster.consumer("y", {"auto.offset.reset": "smallest"})
    with pytest.raises(InvalidConfigError, match="unknown assignor"):
        cluster.consumer("z", {"partition.assignment.strategy": "fair"})
    java = cluster.consumer("w", {"partition.assignment.strategy":
                                  "org.apache.kafka.clients.consumer.RoundRobinAssignor"})
    assert java.config.partition_assignment_strategy == ("roundrobin",)


def test_poll_returns_each_partition_s_records_in_offset_order(cluster):
    produce(cluster, 0, "a1", "a2", "a3")
    produce(cluster, 1, "b1", "b2")
    c = consumer(cluster)
    c.subscribe(["t"])
    records = poll_until(c, 5)
    by_partition = {p: [(r.offset, r.value) for r in records if r.partition == p] for p in (0, 1)}
    assert by_partition == {0: [(0, b"a1"), (1, b"a2"), (2, b"a3")], 1: [(0, b"b1"), (1, b"b2")]}
    assert c.position(T0) == 3 and c.position(T1) == 2
    assert [r["value"] for r in c.records_consumed() if r["partition"] == 0] == ["a1", "a2", "a3"]


def test_latest_skips_what_was_there_and_none_refuses_to_guess(cluster):
    produce(cluster, 0, "old")
    late = consumer(cluster, "late", auto_offset_reset="latest")
    late.subscribe(["t"])
    assert late.poll(timeout_ms=2000) == [] and late.position(T0) == 1
    produce(cluster, 0, "new")
    assert [r.value for r in poll_until(late, 1)] == [b"new"]
    strict = consumer(cluster, "strict", auto_offset_reset="none", group_id="other")
    strict.subscribe(["t"])
    with pytest.raises(NoOffsetForPartitionError):
        poll_until(strict, 1, timeout_ms=5000)


def test_max_poll_records_caps_each_poll_and_the_rest_waits_in_the_buffer(cluster):
    produce(cluster, 0, *[f"m{i}" for i in range(7)])
    c = consumer(cluster, max_poll_records=3)
    c.subscribe(["t"])
    first = poll_until(c, 1)
    assert len(first) == 3
    second = c.poll(timeout_ms=0)         # already fetched: no waiting
    assert [r.offset for r in second] == [3, 4, 5]


def test_records_below_the_position_are_dropped_from_whole_batches(cluster):
    cluster.produce_batch("t", 0, [(None, f"m{i}") for i in range(5)])
    cluster.run_until_idle()
    c = consumer(cluster, group_id=None)
    c.assign([T0])
    c.seek(T0, 3)
    assert [r.offset for r in poll_until(c, 2)] == [3, 4]


def test_seek_rewinds_and_seek_to_end_skips(cluster):
    produce(cluster, 0, "m0", "m1", "m2")
    c = consumer(cluster)
    c.assign([T0])
    assert len(poll_until(c, 3)) == 3
    c.seek(T0, 1)
    assert [r.value for r in poll_until(c, 2)] == [b"m1", b"m2"]
    c.seek_to_beginning([T0])
    assert c.position(T0) == 0
    c.seek_to_end()
    assert c.position(T0) == 3


def test_a_paused_partition_is_not_fetched_until_resumed(cluster):
    c = consumer(cluster)
    c.subscribe(["t"])
    poll_until(c, 1, timeout_ms=3000)
    c.pause([T0])
    produce(cluster, 0, "held")
    produce(cluster, 1, "flows")
    assert [r.value for r in poll_until(c, 1, timeout_ms=3000)] == [b"flows"]
    assert c.poll(timeout_ms=2000) == [] and c.paused() == {T0}
    c.resume([T0])
    assert [r.value for r in poll_until(c, 1)] == [b"held"]


def test_a_consumer_never_reads_above_the_high_watermark(cluster):
    c = consumer(cluster)
    c.assign([T0])
    leader = cluster.leader_of("t", 0)
    for broker in cluster.partition_state("t", 0)["replicas"]:
        if broker != leader:
            cluster.pause_fetcher(broker)
    cluster.produce("t", None, "uncommitted", partition=0, acks=1)
    assert c.poll(timeout_ms=3000) == []
    for broker in cluster.partition_state("t", 0)["replicas"]:
        if broker != leader:
            cluster.resume_fetcher(broker)
    assert [r.value for r in poll_until(c, 1)] == [b"uncommitted"]


def test_the_consumer_follows_a_new_partition_leader(cluster):
    produce(cluster, 0, "before")
    c = consumer(cluster)
    c.assign([T0])
    assert len(poll_until(c, 1)) == 1
    cluster.kill_broker(cluster.leader_of("t", 0))
    cluster.run_for(25000)
    produce(cluster, 0, "after")
    assert [r.value for r in poll_until(c, 1)] == [b"after"]


def test_commit_sync_and_committed(cluster):
    produce(cluster, 0, "m0", "m1")
    c = consumer(cluster, enable_auto_commit=False)
    c.subscribe(["t"])
    poll_until(c, 2)
    assert c.committed([T0, T1]) == {T0: None, T1: None}
    c.commit_sync()
    assert c.committed([T0, T1]) == {T0: 2, T1: 0}
    c.commit_sync({"t-0": 1})
    assert c.committed(["t-0"]) == {T0: 1}


def test_a_consumer_outside_group_management_commits_with_generation_minus_one(cluster):
    produce(cluster, 1, "x")
    c = consumer(cluster, group_id="manual")
    c.assign([T1])
    poll_until(c, 1)
    c.commit_sync()
    again = consumer(cluster, "again", group_id="manual")
    again.assign([T1])
    assert again.position(T1) == 1          # starts at the committed offset


def test_no_group_no_commit(cluster):
    c = consumer(cluster, group_id=None)
    c.assign([T0])
    with pytest.raises(KafkaClientError, match="group.id"):
        c.commit_sync()
    with pytest.raises(KafkaClientError, match="group.id"):
        c.subscribe(["t"])


def test_subscribe_and_assign_do_not_mix_and_poll_needs_one(cluster):
    c = consumer(cluster)
    with pytest.raises(IllegalStateError, match="not subscribed"):
        c.poll(timeout_ms=10)
    c.subscribe(["t"])
    with pytest.raises(IllegalStateError, match="mutually exclusive"):
        c.assign([T0])


def test_poll_blocks_for_timeout_ms_of_virtual_time(cluster):
    c = consumer(cluster)
    c.subscribe(["t"])
    poll_until(c, 1, timeout_ms=4000)
    start = cluster.now_ms
    assert c.poll(timeout_ms=1500) == []
    assert cluster.now_ms - start == 1500


def test_a_closed_or_crashed_consumer_cannot_poll(cluster):
    a, b = consumer(cluster, "a"), consumer(cluster, "b")
    a.subscribe(["t"])
    b.subscribe(["t"])
    poll_until(a, 1, 3000)
    a.close()
    with pytest.raises(IllegalStateError, match="closed"):
        a.poll(timeout_ms=10)
    b.crash()
    with pytest.raises(IllegalStateError, match="crashed"):
        b.poll(timeout_ms=10)


def test_commit_sync_from_a_member_kicked_out_of_the_group_fails(cluster):
    produce(cluster, 0, "m0")
    c = consumer(cluster, enable_auto_commit=False, session_timeout_ms=6000, request_timeout_ms=3000)
    c.subscribe(["t"])
    poll_until(c, 1)
    for broker in (1, 2, 3):
        cluster.partition_network(c.node, broker)
    cluster.run_for(10000)             # the coordinator drops it after its session timeout
    for broker in (1, 2, 3):
        cluster.heal_network(c.node, broker)
    with pytest.raises(CommitFailedError):
        c.commit_sync()


def test_commit_async_reports_through_its_callback(cluster):
    produce(cluster, 0, "m0")
    c = consumer(cluster, enable_auto_commit=False)
    c.subscribe(["t"])
    poll_until(c, 1)
    results = []
    c.commit_async(callback=lambda error, offsets: results.append((error, offsets)))
    assert results == []                                   # nothing waits for it
    c.poll(timeout_ms=500)
    assert results == [(None, {T0: (1, 0), T1: (0, 0)})]     # (next offset, leader epoch)
    assert c.committed([T0]) == {T0: 1}


def test_beginning_end_and_offsets_for_times(cluster):
    for value in ("m0", "m1", "m2"):
        produce(cluster, 0, value)
        cluster.run_for(10)                      # distinct timestamps
    c = consumer(cluster, group_id=None)
    assert c.beginning_offsets([T0, T1]) == {T0: 0, T1: 0}
    assert c.end_offsets(["t-0", "t-1"]) == {T0: 3, T1: 0}
    stamps = [r.timestamp for r in cluster.read("t", 0)]
    assert c.offsets_for_times({T0: stamps[1], T1: 0}) == {T0: (1, stamps[1]), T1: None}
