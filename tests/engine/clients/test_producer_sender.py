"""Delivering batches: one request per leader, retries and backoff, time-outs, leader moves."""
from __future__ import annotations

import pytest

from engine.cluster import EPOCH_MS, Cluster


def make_cluster(tmp_path, *, brokers=3, seed=5, config=None):
    return Cluster(brokers=brokers, data_dir=str(tmp_path), seed=seed, config=config)


def kinds(events, kind, producer="producer-p"):
    return [e for e in events if e.kind == kind and getattr(e, "producer", producer) == producer]


def test_batches_for_partitions_with_the_same_leader_travel_in_one_request(tmp_path):
    cluster = make_cluster(tmp_path)
    cluster.create_topic("t", partitions=6, replication_factor=1,
                         replica_assignment=[[1], [2], [3], [1], [2], [3]])
    events = []
    cluster.subscribe(events.append)
    producer = cluster.producer("p", {"linger.ms": 100})
    records = [producer.send("t", None, f"v{p}", partition=p) for p in range(6)]
    producer.flush()
    requests = [e for e in events if e.kind == "message_sent" and e.api == "Produce"]
    assert sorted((e.dst, [(x["topic"], x["partition"]) for x in e.summary["partitions"]]) for e in requests) == [
        ("broker-1", [("t", 0), ("t", 3)]), ("broker-2", [("t", 1), ("t", 4)]), ("broker-3", [("t", 2), ("t", 5)])]
    answers = [e for e in events if e.kind == "message_sent" and e.api == "ProduceResponse"]
    assert len(answers) == 3 and all(len(e.summary["partitions"]) == 2 for e in answers)
    assert [(r.partition, r.acked, r.offset) for r in records] == [(p, True, 0) for p in range(6)]
    assert [r.value for r in cluster.read("t", 4)] == [b"v4"]
    cluster.close()


def test_a_lost_request_is_retried_with_exponential_backoff_until_delivery_timeout(tmp_path):
    cluster = make_cluster(tmp_path)
    cluster.create_topic("t", partitions=1, replication_factor=1, replica_assignment=[[1]])
    events = []
    cluster.subscribe(events.append)
    producer = cluster.producer("p", {"request.timeout.ms": 1000, "delivery.timeout.ms": 8000, "linger.ms": 0})
    producer.send("t", "k", "first")     # warm up: metadata and producer id
    producer.flush()
    cluster.partition_network("producer-p", 1)
    start = cluster.now_ms
    record = producer.send("t", "k", "lost")
    producer.flush()
    retries = kinds(events, "producer_batch_retried")
    assert {e.error for e in retries} == {"NETWORK_EXCEPTION"}
    backoffs = [e.backoff_ms for e in retries]
    for attempt, backoff in enumerate(backoffs):
        assert 0.8 * min(100 * 2 ** attempt, 1000) <= backoff <= min(1.2 * 100 * 2 ** attempt, 1000)
    assert len(backoffs) == 5 and backoffs[-1] == 1000                 # capped at retry.backoff.max.ms
    assert record.acked is False and record.error == "REQUEST_TIMED_OUT"
    assert "Expiring 1 record(s)" in record.error_message
    failed = kinds(events, "producer_batch_failed")[-1]
    assert failed.time_ms - start == 8000                              # expired in flight, at the deadline
    assert record.attempts == len(retries) + 1
    assert producer.metrics()["record-retry-total"] == len(retries)
    cluster.close()


def test_with_retries_0_a_time_out_fails_the_record(tmp_path):
    cluster = make_cluster(tmp_path)
    cluster.create_topic("t", partitions=1, replication_factor=1, replica_assignment=[[1]])
    producer = cluster.producer("p", {"retries": 0, "request.timeout.ms": 1000, "linger.ms": 0})
    assert producer.config.enable_idempotence is False and producer.warnings
    producer.send("t", "k", "first")
    producer.flush()
    cluster.partition_network("producer-p", 1)
    record = producer.send("t", "k", "lost")
    producer.flush()
    assert (record.acked, record.error, record.attempts) == (False, "NETWORK_EXCEPTION", 1)
    cluster.close()


def test_a_broker_error_that_is_not_retriable_fails_the_batch(tmp_path):
    cluster = make_cluster(tmp_path)
    cluster.create_topic("t", partitions=1, replication_factor=1, replica_assignment=[[1]],
                         config={"max.message.bytes": 200})
    producer = cluster.producer("p", {"linger.ms": 50})
    records = [producer.send("t", None, f"value-{i}", partition=0) for i in range(20)]
    producer.flush()
    assert {(r.acked, r.error) for r in records} == {(False, "MESSAGE_TOO_LARGE")}
    assert all(r.attempts == 1 for r in records)
    cluster.close()


def test_acks_0_counts_a_record_as_sent_once_it_is_on_the_wire(tmp_path):
    cluster = make_cluster(tmp_path)
    cluster.create_topic("t", partitions=1, replication_factor=3, replica_assignment=[[1, 2, 3]])
    events = []
    cluster.subscribe(events.append)
    producer = cluster.producer("p", {"acks": 0})
    record = producer.send("t", "k", "v")
    producer.flush()
    assert (record.acked, record.offset) == (True, -1)
    assert not any(e.kind == "message_sent" and e.api == "ProduceResponse" for e in events)
    cluster.run_until_idle()
    assert [r.value for r in cluster.read("t", 0)] == [b"v"]
    cluster.close()


def test_the_producer_finds_the_new_leader_and_loses_no_acknowledged_record(tmp_path):
    cluster = make_cluster(tmp_path, seed=11)
    cluster.create_topic("t", partitions=1, replication_factor=3, replica_assignment=[[1, 2, 3]])
    events = []
    cluster.subscribe(events.append)
    producer = cluster.producer("p", {"linger.ms": 5})
    records = []
    for i in range(40):
        records.append(producer.send("t", None, f"m{i}"))
        cluster.run_for(20)
        if i == 15:
            cluster.kill_broker(1)
    producer.flush()
    cluster.run_until_idle()
    new_leader = cluster.leader_of("t", 0)
    assert new_leader in (2, 3)
    log = {r.offset: r.value for r in cluster.read("t", 0)}
    acked = [r for r in records if r.acked]
    assert len(acked) == 40
    assert all(log[r.offset] == r.value for r in acked)                 # nothing acknowledged is lost
    # Idempotent: each record once, in order, although batches sent to the new leader while older
    # ones were still timing out towards the dead one came back OUT_OF_ORDER_SEQUENCE_NUMBER.
    assert [log[o] for o in sorted(log)] == [f"m{i}".encode() for i in range(40)]
    retried = kinds(events, "producer_batch_retried")
    assert "NETWORK_EXCEPTION" in {e.error for e in retried}
    assert {e.error for e in retried} <= {"NETWORK_EXCEPTION", "NOT_LEADER_OR_FOLLOWER", "OUT_OF_ORDER_SEQUENCE_NUMBER"}
    metadata_after_kill = [e for e in events if e.kind == "message_sent" and e.api == "Metadata"
                           and e.src == "producer-p" and e.time_ms > records[15].timestamp - EPOCH_MS]
    assert metadata_after_kill
    assert any(e.kind == "producer_batch_sent" and e.broker == new_leader for e in events)
    cluster.close()


def test_one_request_in_flight_keeps_order_without_idempotence(tmp_path):
    cluster = make_cluster(tmp_path)
    cluster.create_topic("t", partitions=1, replication_factor=1, replica_assignment=[[1]])
    producer = cluster.producer("p", {"enable.idempotence": False, "max.in.flight.requests.per.connection": 1,
                                      "request.timeout.ms": 1000})
    producer.send("t", "k", "w")
    producer.flush()
    a = producer.send("t", "k", "a")
    _run_until_sent(cluster, "producer-p")
    cluster.partition_network("producer-p", 1)
    _run_until_dropped(cluster, "producer-p")
    cluster.heal_network("producer-p", 1)
    b = producer.send("t", "k", "b")
    producer.flush()
    assert a.acked and b.acked and a.offset < b.offset
    assert [r.value for r in cluster.read("t", 0)] == [b"w", b"a", b"b"]
    cluster.close()


def _run_until_sent(cluster, src):
    seen = []
    stop = cluster.subscribe(lambda e: seen.append(e) if e.kind == "message_sent" and e.api == "Produce"
                             and e.src == src else None)
    while not seen:
        cluster.step()
    stop()


def _run_until_dropped(cluster, src):
    seen = []
    stop = cluster.subscribe(lambda e: seen.append(e) if e.kind == "message_dropped" and e.src == src else None)
    while not seen:
        cluster.step()
    stop()


@pytest.mark.parametrize("partitioner", ["sticky", "round-robin"])
def test_keyed_records_go_to_the_keys_partition_whatever_the_partitioner(tmp_path, partitioner):
    from engine.clients.partitioner import partition_for_key
    cluster = make_cluster(tmp_path)
    cluster.create_topic("t", partitions=6, replication_factor=1)
    producer = cluster.producer("p", {"partitioner.class": partitioner})
    records = [producer.send("t", f"key-{i}", "v") for i in range(12)]
    producer.flush()
    assert [r.partition for r in records] == [partition_for_key(f"key-{i}".encode(), 6) for i in range(12)]
    cluster.close()


def test_send_after_close_is_refused_and_close_waits_for_answers(tmp_path):
    from engine.clients.producer import ProducerError
    cluster = make_cluster(tmp_path)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    producer = cluster.producer("p", {"linger.ms": 60000})
    record = producer.send("t", "k", "v")
    producer.close()
    assert record.acked
    with pytest.raises(ProducerError, match="closed"):
        producer.send("t", "k", "late")
    cluster.close()


def test_a_crashed_producer_never_learns_what_became_of_its_records(tmp_path):
    cluster = make_cluster(tmp_path)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    producer = cluster.producer("p", {"linger.ms": 0})
    record = producer.send("t", "k", "v")
    _run_until_sent(cluster, "producer-p")
    producer.crash()
    cluster.run_until_idle()
    assert record.acked is None and record.error == "PRODUCER_CRASHED"
    assert [r.value for r in cluster.read("t", 0)] == [b"v"]     # it was written all the same
    cluster.close()


@pytest.mark.parametrize("max_in_flight", [1, 5])
def test_no_more_than_max_in_flight_requests_wait_for_answers_from_one_broker(tmp_path, max_in_flight):
    cluster = make_cluster(tmp_path)
    cluster.create_topic("t", partitions=1, replication_factor=1, replica_assignment=[[1]])
    producer = cluster.producer("p", {"batch.size": 1, "max.in.flight.requests.per.connection": max_in_flight})
    cluster.run_until_idle()
    cluster.slow_broker(1, 50)
    seen = []
    cluster.subscribe(lambda e: seen.append(producer.sender.in_flight_per_node.get(1, 0)))
    records = [producer.send("t", None, f"v{i}") for i in range(12)]   # one record per batch
    producer.flush()
    assert max(seen) == max_in_flight
    assert [r.offset for r in records] == list(range(12))
    cluster.close()
