"""send_batch(): many records in one call, the same records, batches and events as one send() each;
partitions_for(): Kafka's partitionsFor, which waits for the topic's metadata."""
from __future__ import annotations

import json

import pytest

from engine.clients.producer import ProducerError
from engine.cluster import Cluster


def _run(tmp_path, name: str, config: dict, records: list[tuple], *, batched: bool, partition=None,
         wait_for_metadata: bool = False) -> tuple[list[str], list[dict], list[list]]:
    """One cluster, one producer "p" given `records` one send() at a time or in send_batch() calls
    of 7; what it did: every event, the producer's records, each partition's log."""
    cluster = Cluster(brokers=3, data_dir=str(tmp_path / name), seed=9)
    cluster.create_topic("t", partitions=4, replication_factor=1, replica_assignment=[[1], [2], [3], [1]])
    events: list[str] = []
    cluster.subscribe(lambda e: events.append(json.dumps(e.to_dict(), sort_keys=True, default=repr)))
    producer = cluster.producer("p", config)
    if wait_for_metadata:
        producer.partitions_for("t")
    if batched:
        for start in range(0, len(records), 7):
            producer.send_batch("t", records[start:start + 7], partition=partition, tag="x")
    else:
        for key, value in records:
            producer.send("t", key, value, partition=partition, tag="x")
    producer.flush()
    logs = [[(r.offset, r.key, r.value) for r in cluster.read("t", p, 0, 10_000)] for p in range(4)]
    produced = producer.records()
    cluster.close()
    return events, produced, logs


VALUES = [(None, b"v" * (i % 13 * 40)) for i in range(60)]
MIXED = [(None if i % 3 else f"k{i % 5}", f"value {i}" * (i % 4)) for i in range(60)]


@pytest.mark.parametrize("config, records, partition, wait", [
    ({"batch.size": 1024, "linger.ms": 5}, VALUES, None, False),                  # sticky switches, full batches
    ({"batch.size": 1024, "linger.ms": 5}, VALUES, None, True),                   # placed at once
    ({"batch.size": 512, "buffer.memory": 2048, "linger.ms": 0}, VALUES, None, True),   # waits for memory
    ({"batch.size": 700, "partitioner.class": "round-robin"}, MIXED, None, True),  # keys, text, round robin
    ({"batch.size": 700, "enable.idempotence": True, "acks": "all"}, MIXED, 2, True),   # one partition, idempotent
    ({"batch.size": 300, "max.request.size": 450}, VALUES, None, True),           # some too large: refused
])
def test_send_batch_does_what_as_many_sends_do(tmp_path, config, records, partition, wait):
    one_by_one = _run(tmp_path, "sends", config, records, batched=False, partition=partition, wait_for_metadata=wait)
    batched = _run(tmp_path, "batch", config, records, batched=True, partition=partition, wait_for_metadata=wait)
    assert batched[0] == one_by_one[0]
    assert batched[1] == one_by_one[1]
    assert batched[2] == one_by_one[2]


def test_send_batch_returns_one_record_per_pair_in_order(tmp_path):
    cluster = Cluster(brokers=1, data_dir=str(tmp_path), seed=1)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    producer = cluster.producer("p")
    sent = producer.send_batch("t", [(None, b"a"), ("k", "b")], timestamp=1_000)
    producer.flush()
    assert [(r.key, r.value, r.timestamp, r.offset, r.acked) for r in sent] == [(None, b"a", 1_000, 0, True),
                                                                               (b"k", b"b", 1_000, 1, True)]
    cluster.close()


def test_partitions_for_waits_for_the_topic_s_metadata_without_sending_anything(tmp_path):
    cluster = Cluster(brokers=3, data_dir=str(tmp_path), seed=1)
    cluster.create_topic("t", partitions=3, replication_factor=2)
    producer = cluster.producer("p")
    start = cluster.now_ms
    partitions = producer.partitions_for("t")
    assert [p.partition for p in partitions] == [0, 1, 2] and all(p.leader in (1, 2, 3) for p in partitions)
    assert cluster.now_ms > start and not producer.has_pending()
    assert producer.partitions_for("t") == partitions   # known now: no waiting
    cluster.close()


def test_partitions_for_a_topic_that_never_shows_up_fails_after_max_block_ms(tmp_path):
    cluster = Cluster(brokers=1, data_dir=str(tmp_path), seed=1)
    producer = cluster.producer("p", {"max.block.ms": 2_000})
    start = cluster.now_ms
    with pytest.raises(ProducerError, match="not present in metadata after 2000 ms"):
        producer.partitions_for("nowhere")
    assert cluster.now_ms - start == 2_000
    assert "nowhere" not in producer.sender.metadata.wanted
    cluster.close()
