"""Sending records: how they wait in batches (linger.ms, batch.size), per-partition deques,
buffer.memory and max.request.size."""
from __future__ import annotations

import pytest

from engine.cluster import Cluster


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(brokers=3, data_dir=str(tmp_path), seed=5)
    c.create_topic("t", partitions=3, replication_factor=1, replica_assignment=[[1], [2], [3]])
    yield c
    c.close()


def sent_events(events, producer="producer-p"):
    return [e for e in events if e.kind == "producer_batch_sent" and e.producer == producer]


def ready_producer(cluster, config):
    """A producer that has its metadata (and producer id) already."""
    producer = cluster.producer("p", config)
    cluster.run_until_idle()
    return producer


def test_send_never_moves_time_records_wait_for_metadata_in_order(cluster):
    producer = cluster.producer("p", {"linger.ms": 0})
    before = cluster.now_ms
    records = [producer.send("t", None, f"v{i}", partition=0) for i in range(3)]
    assert cluster.now_ms == before and all(r.partition == -1 and r.acked is None for r in records)
    assert not producer.accumulator.batches                   # no metadata yet: nothing partitioned
    producer.flush()
    assert [r.offset for r in records] == [0, 1, 2]


def test_a_topic_that_never_shows_up_fails_its_records_after_max_block_ms(cluster):
    producer = ready_producer(cluster, {"max.block.ms": 3000})
    record = producer.send("missing", "k", "v")
    cluster.run_for(2999)
    assert record.acked is None
    cluster.run_for(10)
    assert (record.acked, record.error) == (False, "REQUEST_TIMED_OUT")
    assert "not present in metadata after 3000 ms" in record.error_message


def test_a_record_waits_linger_ms_before_its_batch_is_sent(cluster):
    events = []
    cluster.subscribe(events.append)
    producer = ready_producer(cluster, {"linger.ms": 50, "enable.idempotence": False})
    record = producer.send("t", None, "v", partition=0)
    sent_at = cluster.now_ms
    cluster.run_for(49)
    assert sent_events(events) == [] and record.acked is None
    cluster.run_for(20)
    assert [e.time_ms for e in sent_events(events)] == [sent_at + 50]
    cluster.run_until_idle()
    assert record.acked and record.offset == 0 and record.attempts == 1


def test_records_of_one_partition_share_a_batch_and_each_partition_has_its_own(cluster):
    producer = ready_producer(cluster, {"linger.ms": 1000})
    for i in range(5):
        producer.send("t", None, f"a{i}", partition=0)
    for i in range(2):
        producer.send("t", None, f"b{i}", partition=2)
    queued = {tp: [len(b.records) for b in dq] for tp, dq in producer.accumulator.batches.items()}
    assert queued == {("t", 0): [5], ("t", 2): [2]}
    producer.flush()
    assert [r.value for r in cluster.read("t", 0)] == [b"a0", b"a1", b"a2", b"a3", b"a4"]
    assert producer.metrics()["batch-send-total"] == 2


def test_a_full_batch_goes_without_waiting_for_linger(cluster):
    events = []
    cluster.subscribe(events.append)
    producer = ready_producer(cluster, {"linger.ms": 60000, "batch.size": 200})
    records = [producer.send("t", None, f"value-{i:03d}", partition=1) for i in range(12)]
    assert [(len(b.records), b.is_full()) for b in producer.accumulator.batches[("t", 1)]] == [(8, True), (4, False)]
    cluster.run_for(100)
    sent = sent_events(events)
    assert [(e.records_count, e.size_in_bytes) for e in sent] == [(8, 189)]
    assert [r.acked for r in records] == [True] * 8 + [None] * 4
    producer.flush()
    assert all(r.acked for r in records)


def test_flush_sends_everything_at_once_and_waits_for_the_answers(cluster):
    producer = cluster.producer("p", {"linger.ms": 60000})
    start = cluster.now_ms
    records = [producer.send("t", f"k{i}", f"v{i}") for i in range(20)]
    producer.flush()
    assert all(r.acked for r in records) and cluster.now_ms - start < 1000
    assert not producer.accumulator.has_incomplete()
    assert producer.metrics()["buffer-available-bytes"] == producer.config.buffer_memory


def test_a_record_waits_for_buffer_memory_while_the_full_buffer_is_sent(cluster):
    events = []
    cluster.subscribe(events.append)
    producer = ready_producer(cluster, {"linger.ms": 60000, "batch.size": 300, "buffer.memory": 700})
    first = [producer.send("t", None, f"v{i}", partition=i) for i in range(2)]   # two batches: 600 bytes
    assert producer.accumulator.available_memory == 100
    third = producer.send("t", None, "v2", partition=2)      # needs 300 more: waits, as a blocked send()
    later = producer.send("t", None, "v3", partition=0)      # and whatever comes after it waits behind it
    assert third.partition == 2 and later.partition == -1 and producer.has_pending()
    cluster.run_for(30)                                      # exhausted memory: batches go before linger.ms
    assert all(r.acked for r in first) and len(sent_events(events)) >= 2
    assert producer.accumulator.batches[("t", 2)][0].records == [third]
    assert producer.accumulator.batches[("t", 0)][0].records == [later]
    producer.flush()
    assert third.acked and later.acked


def test_send_fails_the_record_when_the_buffer_stays_full_for_max_block_ms(cluster):
    producer = ready_producer(cluster, {"linger.ms": 0, "batch.size": 300, "buffer.memory": 700,
                                        "max.block.ms": 2000})
    for broker in (1, 2, 3):
        cluster.partition_network("producer-p", broker)
    stuck = [producer.send("t", None, f"v{i}", partition=i) for i in range(2)]   # two batches: 600 bytes
    refused = producer.send("t", None, "one too many", partition=2)
    cluster.run_for(1999)
    assert refused.acked is None
    cluster.run_for(2)
    assert refused.acked is False and refused.error == "BUFFER_EXHAUSTED"
    assert "max.block.ms=2000" in refused.error_message
    assert all(r.acked is None for r in stuck)


def test_a_record_larger_than_max_request_size_fails_at_once(cluster):
    events = []
    cluster.subscribe(events.append)
    producer = ready_producer(cluster, {"max.request.size": 1000})
    producer.send("t", None, "small", partition=0)
    before = cluster.now_ms
    big = producer.send("t", "k", "x" * 1000, partition=0)
    assert cluster.now_ms == before
    assert big.acked is False and big.error == "MESSAGE_TOO_LARGE"
    assert big.partition == 0 and "1087 bytes" in big.error_message and "max.request.size" in big.error_message
    producer.flush()
    assert [r.value for r in cluster.read("t", 0)] == [b"small"]
    assert not any(e.kind == "producer_batch_sent" and e.records_count and "x" * 10 in str(e.records) for e in events)


def test_one_request_holds_at_most_max_request_size_bytes_of_batches(tmp_path):
    cluster = Cluster(brokers=1, data_dir=str(tmp_path), seed=3)
    cluster.create_topic("t", partitions=4, replication_factor=1)
    events = []
    cluster.subscribe(events.append)
    producer = ready_producer(cluster, {"linger.ms": 60000, "batch.size": 600, "max.request.size": 1300})
    for p in range(4):
        producer.send("t", None, "x" * 500, partition=p)
    producer.flush()
    requests = [e for e in events if e.kind == "message_sent" and e.api == "Produce"]
    assert [len(e.summary["partitions"]) for e in requests] == [2, 2]
    cluster.close()


def test_gzip_batches_are_compressed_on_the_wire(cluster):
    producer = cluster.producer("p", {"compression.type": "gzip", "linger.ms": 100})
    for _ in range(50):
        producer.send("t", None, "the same words again and again", partition=0)
    events = []
    cluster.subscribe(events.append)
    producer.flush()
    sent = sent_events(events)
    assert len(sent) == 1 and sent[0].records_count == 50 and sent[0].size_in_bytes < 400
    assert [r.value for r in cluster.read("t", 0)][-1] == b"the same words again and again"
