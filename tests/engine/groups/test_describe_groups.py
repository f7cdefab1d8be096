"""describe_groups / consumer_lag / consumed: what kafka-consumer-groups --describe would show."""
from __future__ import annotations

import pytest

from engine import Cluster
from engine.inspect.groups import consumed, consumer_lag, describe_group, describe_groups


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(3, str(tmp_path / "lab"), seed=41,
                config={"offsets.topic.num.partitions": 4, "group.initial.rebalance.delay.ms": 0})
    c.create_topic("t", 2, 3)
    yield c
    c.close()


def settled_consumer(cluster, name="c1", **extra):
    c = cluster.consumer(name, {"group.id": "g", "auto.offset.reset": "earliest", "enable.auto.commit": False,
                                **extra})
    c.subscribe(["t"])
    while not c.is_stable():
        c.poll(timeout_ms=200)
    return c


def test_a_group_is_described_in_the_scenario_shape(cluster):
    for v in ("a", "b", "c"):
        cluster.produce("t", None, v, partition=0)
    cluster.run_until_idle()
    c1 = settled_consumer(cluster)
    while len(c1.records_consumed()) < 3:
        c1.poll(timeout_ms=500)
    c1.commit_sync({"t-0": 2})
    [group] = describe_groups(cluster)
    assert list(group) == ["group", "coordinator", "coordinator_partition", "generation", "state", "protocol",
                           "members", "committed", "lag"]
    assert group["group"] == "g" and group["coordinator_partition"] == 103 % 4     # "g".hashCode() == 103
    assert group["coordinator"] == cluster.leader_of("__consumer_offsets", 3)
    assert (group["generation"], group["state"], group["protocol"]) == (1, "Stable", "range")
    assert group["members"] == [{"member": "c1", "member_id": c1.member_id, "assignment": ["t-0", "t-1"]}]
    assert group["committed"] == {"t-0": 2}
    assert group["lag"] == {"t-0": 1, "t-1": None}       # HW 3 - committed 2; t-1 never committed
    assert [r["value"] for r in consumed(cluster)["c1"]] == ["a", "b", "c"]


def test_lag_counts_only_up_to_the_high_watermark(cluster):
    c1 = settled_consumer(cluster)
    c1.commit_sync({"t-1": 0})
    leader = cluster.leader_of("t", 1)
    for broker in cluster.partition_state("t", 1)["replicas"]:
        if broker != leader:
            cluster.pause_fetcher(broker)
    cluster.produce("t", None, "not-yet-committed", partition=1, acks=1)
    cluster.run_for(100)
    assert consumer_lag(cluster, "g")["t-1"] == 0        # the record is above the HW: not consumable yet


def test_a_group_whose_coordinator_is_down_is_unknown_and_an_unknown_group_is_dead(cluster):
    settled_consumer(cluster)
    assert describe_group(cluster, "nobody")["state"] in ("Dead", "Unknown")
    cluster.kill_broker(describe_group(cluster, "g")["coordinator"])
    assert describe_group(cluster, "g")["state"] == "Unknown"
    cluster.run_for(25000)
    assert describe_group(cluster, "g")["state"] == "Stable"
