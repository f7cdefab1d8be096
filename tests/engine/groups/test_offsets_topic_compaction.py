"""__consumer_offsets is compacted (cleanup.policy=compact): each broker's log cleaner cleans it, and a
coordinator that loads the cleaned log, across its offset gaps, gets the newest committed offsets."""
from __future__ import annotations

from engine import Cluster
from engine.groups import coordinator as gc
from engine.groups import offsets_topic as ot
from engine.groups.protocol import (
    FindCoordinatorRequest,
    OffsetCommitPartition,
    OffsetCommitRequest,
    OffsetFetchRequest,
)
from engine.node import Node


def ask(cluster, client, broker, request):
    answers = []
    client.send(f"broker-{broker}", request, answers.append, timeout_ms=60_000)
    while not answers:
        cluster.scheduler.step()
    return answers[0]


def test_the_cleaned_offsets_log_loads_with_the_newest_commits(tmp_path):
    cluster = Cluster(3, str(tmp_path / "lab"), seed=5,
                      config={"offsets.topic.num.partitions": 1, "log.cleaner.backoff.ms": 1000})
    cleaned = []
    cluster.subscribe(lambda e: cleaned.append(e) if e.kind == "log_cleaned" else None)
    cluster.create_topic("t", 2, 3)
    client = Node(cluster.world, "consumer-raw")
    answer = ask(cluster, client, 1, FindCoordinatorRequest("g"))
    while answer.error != "NONE":
        cluster.run_for(100)
        answer = ask(cluster, client, 1, FindCoordinatorRequest("g"))
    coordinator = answer.node_id
    for round_ in range(6):
        for offset in range(round_ * 10, round_ * 10 + 10):
            commit = OffsetCommitRequest("g", -1, "", [OffsetCommitPartition("t", offset % 2, offset, 0)])
            assert ask(cluster, client, coordinator, commit).error == "NONE"
        cluster.run_until_idle()
        for broker in cluster.brokers.values():       # a segment per round, as segment.bytes would roll it
            broker.partitions[(ot.OFFSETS_TOPIC, 0)].log.roll()
    cluster.run_for(1500)
    assert {e.broker for e in cleaned if e.topic == ot.OFFSETS_TOPIC} == {1, 2, 3}   # every replica cleans its own
    leader_log = cluster.brokers[coordinator].partitions[(ot.OFFSETS_TOPIC, 0)].log
    offsets = [r.offset for r in leader_log.records_from(leader_log.log_start_offset)]
    assert leader_log.log_start_offset == 0 and offsets == [58, 59]     # the newest commit per key, with a gap
    fresh = gc.GroupCoordinator(cluster.brokers[coordinator])
    fresh.load(cluster.brokers[coordinator].partitions[(ot.OFFSETS_TOPIC, 0)])
    assert {tp: c.offset for tp, c in fresh.committed("g").items()} == {("t", 0): 58, ("t", 1): 59}
    cluster.kill_broker(coordinator)
    cluster.run_for(25_000)
    new = cluster.leader_of(ot.OFFSETS_TOPIC, 0)
    assert new not in (coordinator, -1)
    fetched = ask(cluster, client, new, OffsetFetchRequest("g", [("t", 0), ("t", 1)]))
    assert [p.committed_offset for p in fetched.partitions] == [58, 59]
    cluster.close()
