"""Kafka's ConsumerCoordinatorTest around commitOffsetsAsync, against the engine's consumer on a real cluster.

The rule (ConsumerCoordinator.commitOffsetsAsync): with the coordinator unknown, an async commit
looks it up first (FindCoordinator) and is sent once the lookup succeeds; several commits can wait
on one lookup and go out in the order they were made; a failed lookup fails them (Kafka's
RetriableCommitFailedException) and nothing is retried, so commits never arrive out of order.
Before, commit_async right after assign() failed at once with COORDINATOR_NOT_AVAILABLE.

Not mirrored: testCoordinatorNotAvailableWithUserAssignedType and testAutoCommitAsyncWithUserAssignedType
(the engine's poll looks the coordinator up for a manually assigned consumer too).
"""
from __future__ import annotations

import pytest

from engine import Cluster
from engine.groups import offsets_topic as ot
from engine.groups.assignors import TopicPartition
from engine.groups.coordinator_partition import coordinator_partition

T0 = TopicPartition("t", 0)
PARTITIONS = 3


def _cluster(tmp_path, *, offsets_topic: bool) -> Cluster:
    c = Cluster(3, str(tmp_path / "lab"), seed=21,
                config={"offsets.topic.num.partitions": PARTITIONS, "group.initial.rebalance.delay.ms": 0})
    c.create_topic("t", 2, 3)
    if offsets_topic:
        c.ensure_offsets_topic()
    c.run_until_idle()
    return c


@pytest.fixture
def cluster(tmp_path):
    c = _cluster(tmp_path, offsets_topic=True)
    yield c
    c.close()


def _requests(cluster: Cluster, api: str, node: str = "consumer-c1") -> list:
    seen: list = []
    cluster.subscribe(lambda e: seen.append(e) if e.kind == "message_sent" and e.api == api and e.src == node
                      else None)
    return seen


def _assigned_consumer(cluster: Cluster):
    consumer = cluster.consumer("c1", {"group.id": "g", "enable.auto.commit": False})
    consumer.assign([T0])
    return consumer


def test_commit_async_right_after_assign_finds_the_coordinator_then_commits(cluster):
    """Mirrors ConsumerCoordinatorTest.testCommitAsyncWithUserAssignedType"""
    finds, commits = _requests(cluster, "FindCoordinator"), _requests(cluster, "OffsetCommit")
    consumer = _assigned_consumer(cluster)
    results: list = []
    consumer.commit_async({T0: 100}, callback=lambda error, offsets: results.append(error))
    assert consumer.coordinator.coordinator is None
    assert len(finds) == 1 and commits == [] and results == []   # the lookup first, nothing failed
    cluster.run_until_idle()
    assert consumer.coordinator.coordinator == cluster.leader_of(ot.OFFSETS_TOPIC, coordinator_partition("g", 3))
    assert len(finds) == 1 and len(commits) == 1
    assert results == [None]
    assert consumer.committed([T0]) == {T0: 100}


def test_the_commit_goes_out_as_soon_as_the_lookup_is_answered(cluster):
    """Mirrors ConsumerCoordinatorTest.testCommitAsyncWithUserAssignedType ("after we've discovered the
    coordinator we should send out the commit request immediately")"""
    seen: list = []
    cluster.subscribe(lambda e: seen.append(e) if e.kind == "message_sent" and e.api in (
        "FindCoordinatorResponse", "OffsetCommit") else None)
    consumer = _assigned_consumer(cluster)
    consumer.commit_async({T0: 7})
    cluster.run_until_idle()
    answer = next(e for e in seen if e.api == "FindCoordinatorResponse" and e.dst == "consumer-c1")
    commit = next(e for e in seen if e.api == "OffsetCommit")
    assert commit.send_ms == answer.arrive_ms


def test_async_commits_waiting_on_one_lookup_go_out_in_order(cluster):
    """Mirrors ConsumerCoordinator.commitOffsetsAsync: several commits chained to one coordinator
    lookup (pendingAsyncCommits), their listeners invoked in the order they were added."""
    finds, commits = _requests(cluster, "FindCoordinator"), _requests(cluster, "OffsetCommit")
    consumer = _assigned_consumer(cluster)
    results: list = []
    for offset in (1, 2, 3):
        consumer.commit_async({T0: offset}, callback=lambda error, offsets: results.append((error, offsets[T0][0])))
    cluster.run_until_idle()
    assert len(finds) == 1
    assert [c.summary["offsets"]["t-0"] for c in commits] == [1, 2, 3]
    assert results == [(None, 1), (None, 2), (None, 3)]
    assert consumer.committed([T0]) == {T0: 3}


def test_a_failed_lookup_fails_the_async_commit_once_and_sends_nothing(tmp_path):
    """Mirrors ConsumerCoordinator.commitOffsetsAsync's lookup listener (onFailure: the commit completes
    with RetriableCommitFailedException). A fresh cluster's first FindCoordinator creates
    __consumer_offsets and is answered COORDINATOR_NOT_AVAILABLE, as Kafka's is."""
    cluster = _cluster(tmp_path, offsets_topic=False)
    commits = _requests(cluster, "OffsetCommit")
    failed: list = []
    cluster.subscribe(lambda e: failed.append(e.error) if e.kind == "offset_commit_failed" else None)
    consumer = _assigned_consumer(cluster)
    results: list = []
    consumer.commit_async({T0: 5}, callback=lambda error, offsets: results.append(error))
    cluster.run_until_idle()
    assert results == ["COORDINATOR_NOT_AVAILABLE"] and failed == ["COORDINATOR_NOT_AVAILABLE"]
    assert commits == []                                   # not retried behind the application's back
    consumer.commit_async({T0: 6}, callback=lambda error, offsets: results.append(error))
    cluster.run_until_idle()
    assert results == ["COORDINATOR_NOT_AVAILABLE", None] and len(commits) == 1
    assert consumer.committed([T0]) == {T0: 6}
    cluster.close()


def test_an_async_commit_answered_coordinator_not_available_marks_the_coordinator_unknown(cluster):
    """Mirrors ConsumerCoordinatorTest.testCommitOffsetAsyncCoordinatorNotAvailable: the coordinator's
    append times out (its followers do not fetch), it answers COORDINATOR_NOT_AVAILABLE, the
    callback hears it once and the consumer looks for the coordinator again."""
    consumer = _assigned_consumer(cluster)
    consumer.commit_sync({T0: 1})
    coordinator = consumer.coordinator.coordinator
    p = coordinator_partition("g", PARTITIONS)
    for broker in cluster.partition_state(ot.OFFSETS_TOPIC, p)["replicas"]:
        if broker != coordinator:
            cluster.pause_fetcher(broker)
    finds = _requests(cluster, "FindCoordinator")
    results: list = []
    consumer.commit_async({T0: 100}, callback=lambda error, offsets: results.append(error))
    cluster.run_for(6000)
    assert results == ["COORDINATOR_NOT_AVAILABLE"]
    assert len(finds) >= 1                                 # marked unknown, so looked up again


def test_commit_sync_answered_coordinator_not_available_finds_the_coordinator_and_commits(cluster):
    """Mirrors ConsumerCoordinatorTest.testCommitOffsetSyncCoordinatorNotAvailable: the first commit is
    answered COORDINATOR_NOT_AVAILABLE; commitSync looks the coordinator up again and commits."""
    consumer = _assigned_consumer(cluster)
    consumer.commit_sync({T0: 1})
    coordinator = consumer.coordinator.coordinator
    followers = [b for b in cluster.partition_state(ot.OFFSETS_TOPIC, coordinator_partition("g", PARTITIONS))["replicas"]
                 if b != coordinator]
    for broker in followers:
        cluster.pause_fetcher(broker)
    for broker in followers:     # after offsets.commit.timeout.ms (5 s): the first attempt has failed
        cluster.scheduler.schedule(5500, lambda broker=broker: cluster.resume_fetcher(broker), label="resume")
    failed: list = []
    cluster.subscribe(lambda e: failed.append(e.error) if e.kind == "offset_commit_failed" else None)
    consumer.commit_sync({T0: 100})
    assert failed == ["COORDINATOR_NOT_AVAILABLE"]
    assert consumer.committed([T0]) == {T0: 100}
