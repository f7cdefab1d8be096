"""The idempotent producer: producer ids, sequence numbers, duplicates found by whichever replica
leads, the epoch bump, and runs that replay exactly."""
from __future__ import annotations

from engine.broker.producer_ids import PRODUCER_ID_BLOCK_PATH, PRODUCER_ID_BLOCK_SIZE
from engine.cluster import Cluster


def make_cluster(tmp_path, *, brokers=3, seed=5):
    return Cluster(brokers=brokers, data_dir=str(tmp_path), seed=seed)


def lose_the_answer(cluster, producer, value, leader):
    """Send `value`; let the leader write it; lose the answer on the way back."""
    seen = []
    stop = cluster.subscribe(lambda e: seen.append(e) if e.kind == "records_appended" and e.role == "leader" else None)
    record = producer.send("t", "k", value)
    while not seen:
        cluster.step()
    stop()
    cluster.partition_network(producer.node, leader)
    dropped = []
    stop = cluster.subscribe(lambda e: dropped.append(e) if e.kind == "message_dropped"
                             and e.api == "ProduceResponse" else None)
    while not dropped:
        cluster.step()
    stop()
    cluster.heal_network(producer.node, leader)
    return record


def test_each_producer_gets_its_own_id_from_a_block_claimed_in_the_metadata_store(tmp_path):
    cluster = make_cluster(tmp_path)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    events = []
    cluster.subscribe(events.append)
    first, second = cluster.producer("a"), cluster.producer("b")
    cluster.run_until_idle()
    allocated = [e for e in events if e.kind == "producer_id_allocated"]
    assert sorted(e.producer_id for e in allocated) == [0, 1] and {e.producer_epoch for e in allocated} == {0}
    assert {first.metrics()["producer-id"], second.metrics()["producer-id"]} == {0, 1}
    block = cluster.store.get_or_none(PRODUCER_ID_BLOCK_PATH)
    assert (block["block_start"], block["block_end"]) == (0, PRODUCER_ID_BLOCK_SIZE - 1)
    cluster.close()


def test_a_restarted_broker_claims_a_new_block_of_ids(tmp_path):
    cluster = make_cluster(tmp_path, brokers=1)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    cluster.producer("a")
    cluster.run_until_idle()
    cluster.kill_broker(1)
    cluster.restart_broker(1)
    cluster.run_until_idle()
    later = cluster.producer("b")
    cluster.run_until_idle()
    assert later.metrics()["producer-id"] == PRODUCER_ID_BLOCK_SIZE
    cluster.close()


def test_sequence_numbers_count_records_per_partition_from_zero(tmp_path):
    cluster = make_cluster(tmp_path)
    cluster.create_topic("t", partitions=2, replication_factor=1)
    events = []
    cluster.subscribe(events.append)
    producer = cluster.producer("p", {"linger.ms": 0})
    for values in (["a", "b", "c"], ["d"], ["e", "f"]):
        for value in values:
            producer.send("t", None, value, partition=0)
        producer.send("t", None, value, partition=1)
        producer.flush()
    sent = [(e.partition, e.base_sequence, e.records_count) for e in events if e.kind == "producer_batch_sent"]
    assert [s for s in sent if s[0] == 0] == [(0, 0, 3), (0, 3, 1), (0, 4, 2)]
    assert [s for s in sent if s[0] == 1] == [(1, 0, 1), (1, 1, 1), (1, 2, 1)]
    cluster.close()


def test_a_new_leader_recognises_a_retry_its_predecessor_wrote(tmp_path):
    cluster = make_cluster(tmp_path, seed=8)
    cluster.create_topic("t", partitions=1, replication_factor=3, replica_assignment=[[1, 2, 3]])
    events = []
    cluster.subscribe(events.append)
    producer = cluster.producer("p")
    producer.send("t", "k", "m1")
    producer.flush()
    record = lose_the_answer(cluster, producer, "m2", leader=1)
    cluster.kill_broker(1)
    producer.flush()
    new_leader = cluster.leader_of("t", 0)
    assert new_leader in (2, 3)
    duplicate = [e for e in events if e.kind == "duplicate_batch_ignored"]
    assert [(e.broker, e.base_offset) for e in duplicate] == [(new_leader, 1)]
    assert (record.acked, record.offset) == (True, 1)
    assert [r.value for r in cluster.read("t", 0)] == [b"m1", b"m2"]
    cluster.close()


def test_a_restarted_leader_rebuilds_producer_state_from_its_log(tmp_path):
    cluster = make_cluster(tmp_path, brokers=1)
    cluster.create_topic("t", partitions=1, replication_factor=1)
    events = []
    cluster.subscribe(events.append)
    producer = cluster.producer("p", {"request.timeout.ms": 5000})
    producer.send("t", "k", "m1")
    producer.flush()
    record = lose_the_answer(cluster, producer, "m2", leader=1)
    cluster.kill_broker(1)
    cluster.restart_broker(1)
    producer.flush()
    assert any(e.kind == "duplicate_batch_ignored" for e in events)
    assert (record.acked, record.offset) == (True, 1)
    assert [r.value for r in cluster.read("t", 0)] == [b"m1", b"m2"]
    cluster.close()


def test_a_batch_that_expired_after_it_was_sent_makes_the_producer_bump_its_epoch(tmp_path):
    cluster = make_cluster(tmp_path)
    cluster.create_topic("t", partitions=1, replication_factor=1, replica_assignment=[[1]])
    events = []
    cluster.subscribe(events.append)
    producer = cluster.producer("p", {"request.timeout.ms": 1000, "delivery.timeout.ms": 3000, "linger.ms": 0})
    producer.send("t", "k", "m1")
    producer.flush()
    cluster.partition_network("producer-p", 1)
    lost = producer.send("t", "k", "lost")
    producer.flush()
    assert lost.error == "REQUEST_TIMED_OUT"
    cluster.heal_network("producer-p", 1)
    after = producer.send("t", "k", "m3")
    producer.flush()
    bumped = [e for e in events if e.kind == "producer_epoch_bumped"]
    assert [e.producer_epoch for e in bumped] == [1]
    sent = [e for e in events if e.kind == "producer_batch_sent" and e.records[0]["value"] == "m3"]
    assert [(e.producer_epoch, e.base_sequence) for e in sent] == [(1, 0)]
    assert after.acked and [r.value for r in cluster.read("t", 0)] == [b"m1", b"m3"]
    state = cluster.brokers[1].partitions[("t", 0)].producer_state.entry(producer.metrics()["producer-id"])
    assert (state.producer_epoch, state.last_sequence) == (1, 0)
    cluster.close()


def _workload(data_dir):
    events = []
    cluster = Cluster(brokers=3, data_dir=data_dir, seed=99, on_event=events.append)
    cluster.create_topic("t", partitions=3, replication_factor=3)
    producer = cluster.producer("p", {"linger.ms": 3})
    for i in range(30):
        producer.send("t", None if i % 2 else f"k{i}", f"v{i}")
        if i == 10:
            cluster.kill_broker(cluster.leader_of("t", 0))
        cluster.run_for(7)
    producer.flush()
    cluster.run_until_idle()
    records = producer.records()
    cluster.close()
    return [e.to_dict() for e in events], records


def test_the_same_seed_gives_the_same_events(tmp_path):
    events_a, records_a = _workload(str(tmp_path / "a"))
    events_b, records_b = _workload(str(tmp_path / "b"))
    assert any(e["kind"] == "producer_batch_retried" for e in events_a)
    assert events_a == events_b and records_a == records_b
