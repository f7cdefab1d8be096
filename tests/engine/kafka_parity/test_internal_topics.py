"""Internal topics: clients may not write them, and the group coordinator survives what it cannot read there.

Kafka's rules: ReplicaManager.appendToLocalLog refuses a client's append to an internal topic
(`Topic.isInternal(topic) && !internalTopicsAllowed` -> INVALID_TOPIC_EXCEPTION) before it looks
for the partition; GroupMetadataManager.loadGroupsAndOffsets skips a record whose key version it
does not know and, for a record it cannot read at all, logs the error and owns the partition with
nothing loaded from it. Before, a client's record in __consumer_offsets made the next coordinator's
load raise ValueError out of Cluster.run_for.
"""
from __future__ import annotations

import pytest

from engine import Cluster
from engine.cluster import ClusterError
from engine.common.topics import INTERNAL_TOPICS, is_internal
from engine.groups import coordinator as gc
from engine.groups import kafka_types as kt
from engine.groups import offsets_topic as ot
from engine.groups.coordinator_partition import coordinator_partition
from engine.groups.protocol import (
    FindCoordinatorRequest,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
)
from engine.node import Node
from engine.protocol import ProducePartitionData, ProduceRequest
from engine.scenarios.runner import run_step
from engine.scenarios.schema import check_step
from engine.storage import record_batch as rb

PARTITIONS = 5
GROUP = "g"
GROUP_PARTITION = coordinator_partition(GROUP, PARTITIONS)


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(3, str(tmp_path / "lab"), seed=3, config={"offsets.topic.num.partitions": PARTITIONS})
    c.create_topic("t", 2, 3)
    c.ensure_offsets_topic()
    c.run_until_idle()
    yield c
    c.close()


def _ask(cluster: Cluster, client: Node, broker: int, request: object) -> object:
    answers: list[object] = []
    client.send(f"broker-{broker}", request, answers.append, timeout_ms=30_000)
    while not answers:
        assert cluster.scheduler.next_time() is not None, "no answer"
        cluster.scheduler.step()
    return answers[0]


def _leader_partition(cluster: Cluster, p: int = GROUP_PARTITION):
    leader = cluster.leader_of(ot.OFFSETS_TOPIC, p)
    return leader, cluster.brokers[leader].partitions[(ot.OFFSETS_TOPIC, p)]


def _fail_over(cluster: Cluster, p: int = GROUP_PARTITION) -> int:
    old, _ = _leader_partition(cluster, p)
    cluster.kill_broker(old)
    cluster.run_for(30_000)
    new = cluster.leader_of(ot.OFFSETS_TOPIC, p)
    assert new not in (old, -1)
    return new


def _commit(cluster: Cluster, client: Node, broker: int, offset: int) -> str:
    answer = _ask(cluster, client, broker, OffsetCommitRequest(GROUP, -1, "", [OffsetCommitPartition("t", 0, offset)]))
    return answer.partitions[0].error


# -- the refusal --------------------------------------------------------------------------------
def test_the_internal_topics_are_kafkas_two_coordinator_topics():
    """Mirrors Topic.isInternal (Topic.INTERNAL_TOPICS, without Kafka 4's share-group state topic)"""
    assert INTERNAL_TOPICS == {"__consumer_offsets", "__transaction_state"}
    assert is_internal("__consumer_offsets") and not is_internal("__mine") and not is_internal("t")


def test_a_producer_cannot_send_to_the_offsets_topic(cluster):
    """Mirrors ProducerFailureHandlingTest.testCannotSendToInternalTopic"""
    producer = cluster.producer("p", {"linger.ms": 0})
    record = producer.send(ot.OFFSETS_TOPIC, b"test", b"test", partition=GROUP_PARTITION)
    producer.flush()
    assert record.acked is False and record.error == "INVALID_TOPIC_EXCEPTION"
    assert _leader_partition(cluster)[1].log_end_offset == 0


@pytest.mark.parametrize("how", ["produce", "produce_batch"])
def test_the_cluster_s_own_produce_is_refused_by_the_broker(cluster, how):
    """Mirrors ReplicaManager.appendToLocalLog: `Topic.isInternal(topic) && !internalTopicsAllowed`"""
    failed = []
    cluster.subscribe(lambda e: failed.append(e) if e.kind == "produce_failed" else None)
    if how == "produce":
        sent = cluster.produce(ot.OFFSETS_TOPIC, "k", "v", partition=GROUP_PARTITION)
    else:
        sent = cluster.produce_batch(ot.OFFSETS_TOPIC, GROUP_PARTITION, [("k", "v"), ("k2", "v2")])
    cluster.run_until_idle()
    assert sent.acked is False and sent.error == "INVALID_TOPIC_EXCEPTION"
    assert [e.error for e in failed] == ["INVALID_TOPIC_EXCEPTION"]
    assert _leader_partition(cluster)[1].log_end_offset == 0


def test_a_lab_or_scenario_produce_step_is_refused_with_the_same_error(cluster):
    """Mirrors ReplicaManager.appendToLocalLog's error, as the scenario runner (and so the lab's
    commands) gives it before sending anything."""
    with pytest.raises(ClusterError) as refused:
        run_step(cluster, "produce", check_step("produce", {"topic": ot.OFFSETS_TOPIC, "value": "v"}), 0)
    assert refused.value.kafka_name == "INVALID_TOPIC_EXCEPTION"
    assert _leader_partition(cluster)[1].log_end_offset == 0


def test_the_refusal_comes_before_the_leadership_check_and_spares_the_other_partitions(cluster):
    """Mirrors ReplicaManager.appendToLocalLog, partition by partition: the internal topic's check
    comes first (a follower answers it too), and the rest of the request is appended."""
    client = Node(cluster.world, "raw-producer")
    leader = cluster.leader_of(ot.OFFSETS_TOPIC, GROUP_PARTITION)
    other = next(b for b in cluster.brokers if b != leader)
    batch = rb.encode_batch([(b"k", b"v")], base_timestamp=cluster.record_clock())
    t_leader = cluster.leader_of("t", 0)
    request = ProduceRequest.for_partitions(1, 1, 30_000, [ProducePartitionData(ot.OFFSETS_TOPIC, GROUP_PARTITION, batch),
                                                           ProducePartitionData("t", 0, batch)])
    answer = _ask(cluster, client, t_leader, request)
    assert [(a.topic, a.error, a.base_offset, a.log_start_offset) for a in answer.partition_responses()] == [
        (ot.OFFSETS_TOPIC, "INVALID_TOPIC_EXCEPTION", -1, -1), ("t", "NONE", 0, 0)]
    alone = _ask(cluster, client, other, ProduceRequest(2, 1, 30_000, ot.OFFSETS_TOPIC, GROUP_PARTITION, batch))
    assert alone.error == "INVALID_TOPIC_EXCEPTION"


def test_a_refused_client_record_leaves_the_coordinator_failover_unharmed(cluster):
    """The issue's run: produce to __consumer_offsets, then fail its leader over. Before the fix the
    record was appended and the new coordinator's load raised ValueError out of run_for."""
    client = Node(cluster.world, "raw-consumer")
    coordinator = _leader_partition(cluster)[0]
    assert _commit(cluster, client, coordinator, 7) == "NONE"
    cluster.produce(ot.OFFSETS_TOPIC, "k", "v", partition=GROUP_PARTITION)
    cluster.run_until_idle()
    new = _fail_over(cluster)
    fetched = _ask(cluster, client, new, OffsetFetchRequest(GROUP, [("t", 0)]))
    assert fetched.partitions[0].committed_offset == 7


def test_the_group_coordinator_still_writes_the_offsets_topic(cluster):
    """Mirrors the coordinator's append (GroupMetadataManager.appendForGroup, internalTopicsAllowed = true)"""
    client = Node(cluster.world, "raw-consumer")
    coordinator = _ask(cluster, client, 1, FindCoordinatorRequest(GROUP)).node_id
    assert _commit(cluster, client, coordinator, 3) == "NONE"
    assert _leader_partition(cluster)[1].log_end_offset == 1


# -- what the coordinator cannot read -----------------------------------------------------------
def _unknown_key(version: int) -> bytes:
    return kt.int16(version) + kt.string(GROUP)


def test_a_key_of_unknown_version_is_read_as_unknown():
    """Mirrors GroupMetadataManagerTest.testReadMessageKeyCanReadUnknownMessage"""
    with pytest.raises(ot.UnknownKeyVersionError) as raised:
        ot.decode_key(_unknown_key(0x7FFF))
    assert raised.value.version == 0x7FFF


def test_loading_skips_records_with_an_unknown_key_version(cluster):
    """Mirrors GroupMetadataManagerTest.testLoadGroupsAndOffsetsWillIgnoreUnknownMessage"""
    _, partition = _leader_partition(cluster)
    now = cluster.record_clock()
    member = ot.MemberMetadata("98098230493", "c", "/10.0.0.1", 300_000, 45_000, b"", b"")
    group = ot.GroupMetadataValue("consumer", 935, "range", member.member_id, now, [member])
    commits = [ot.offset_commit_record(GROUP, t, p, o, commit_timestamp=now)
               for (t, p), o in {("foo", 0): 23, ("foo", 1): 455, ("bar", 0): 8992}.items()]
    unknown = [(_unknown_key(0x7FFF), _unknown_key(0x7FFF)), (_unknown_key(3), _unknown_key(3))]
    partition.append_as_leader(rb.encode_batch(commits + unknown + [ot.group_record(GROUP, group)],
                                               base_timestamp=now), 1)
    fresh = gc.GroupCoordinator(partition.broker)
    fresh.load(partition)
    loaded = fresh.groups[GROUP]
    assert (loaded.state, loaded.generation, loaded.leader_id) == ("Stable", 935, member.member_id)
    assert set(loaded.members) == {member.member_id}
    assert {tp: o.offset for tp, o in fresh.committed(GROUP).items()} == {
        ("foo", 0): 23, ("foo", 1): 455, ("bar", 0): 8992}


@pytest.mark.parametrize("key, value", [
    (b"k", b"v"),                                                     # too short for a key version
    (ot.encode_key(ot.OffsetCommitKey(GROUP, "t", 0)), b"\x00\x09"),  # an unknown value version
    (None, b"v"),                                                     # no key
], ids=["too-short-key", "unknown-value-version", "null-key"])
def test_a_record_the_coordinator_cannot_read_ends_the_load_but_never_the_run(cluster, key, value):
    """Mirrors GroupMetadataManager.loadGroupsAndOffsets: the load's error is caught (Kafka logs it)
    and the partition is owned with nothing loaded from it; a new commit then works there."""
    client = Node(cluster.world, "raw-consumer")
    coordinator, partition = _leader_partition(cluster)
    assert _commit(cluster, client, coordinator, 7) == "NONE"
    records = rb.encode_batch([(key, value)], base_timestamp=cluster.record_clock())
    if key is None:   # a leader refuses a keyless record on a compacted topic (LogValidator.validateKey):
        log = partition.log   # one can only be in the log already (written as a follower copies it)
        log.append_batches(rb.with_base_offset(records, log.log_end_offset), assign_offsets=False)
    else:
        partition.append_as_leader(records, -1)
    cluster.run_until_idle()
    new = _fail_over(cluster)       # the new leader loads the partition: no exception escapes run_for
    owner = gc.coordinator_for(cluster.brokers[new])
    assert GROUP_PARTITION in owner.loaded and owner.committed(GROUP) == {}
    assert _commit(cluster, client, new, 9) == "NONE"
    assert _ask(cluster, client, new, OffsetFetchRequest(GROUP, [("t", 0)])).partitions[0].committed_offset == 9
