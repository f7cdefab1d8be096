"""Follower fetching (KIP-392) end to end: a consumer with client.rack reads from the follower in its rack,
never past that follower's high watermark, and goes back to the leader when the follower cannot serve it."""
from __future__ import annotations

import pytest

from engine import events as ev
from engine.cluster import Cluster
from engine.groups.assignors import TopicPartition
from engine.storage.errors import InvalidConfigError

RACKS = {"1": "rack-a", "2": "rack-b", "3": "rack-c"}
TP = TopicPartition("t", 0)


def rack_cluster(tmp_path, **config) -> tuple[Cluster, list[ev.Event]]:
    events: list[ev.Event] = []
    cluster = Cluster(3, str(tmp_path / "lab"), seed=7, on_event=events.append,
                      config={"broker.rack": RACKS, "replica.selector.class": "rack-aware", **config})
    cluster.create_topic("t", partitions=1, replication_factor=3, replica_assignment=[[1, 2, 3]])
    return cluster, events


def reader(cluster: Cluster, name: str, rack: str | None, **config):
    consumer = cluster.consumer(name, {"auto.offset.reset": "earliest", **({"client.rack": rack} if rack else {}),
                                       **config})
    consumer.assign([("t", 0)])
    return consumer


def fetch_targets(events: list[ev.Event], consumer: str) -> list[str]:
    return [e.dst for e in events if isinstance(e, ev.MessageSent) and e.api == "Fetch"
            and e.src == f"consumer-{consumer}"]


def changes(events: list[ev.Event], consumer: str) -> list[ev.PreferredReadReplicaChanged]:
    return [e for e in events if isinstance(e, ev.PreferredReadReplicaChanged) and e.consumer == consumer]


def test_a_consumer_in_a_follower_s_rack_reads_from_that_follower(tmp_path):
    cluster, events = rack_cluster(tmp_path)
    cluster.produce("t", key="k", value="m0", acks=-1)
    cluster.run_until_idle()
    consumer = reader(cluster, "b", "rack-b")

    got = consumer.poll(timeout_ms=5000)

    assert [r.value for r in got] == [b"m0"]
    [chosen] = changes(events, "b")
    assert (chosen.replica, chosen.previous, chosen.leader) == (2, -1, 1)
    targets = fetch_targets(events, "b")
    assert targets[0] == "broker-1" and set(targets[1:]) == {"broker-2"}   # asked the leader once
    cluster.close()


def test_a_consumer_in_the_leader_s_rack_or_without_a_rack_reads_from_the_leader(tmp_path):
    cluster, events = rack_cluster(tmp_path)
    cluster.produce("t", key="k", value="m0", acks=-1)
    cluster.run_until_idle()
    for name, rack in (("a", "rack-a"), ("plain", None), ("elsewhere", "rack-z")):
        assert [r.value for r in reader(cluster, name, rack).poll(timeout_ms=5000)] == [b"m0"]
        assert set(fetch_targets(events, name)) == {"broker-1"} and not changes(events, name)
    cluster.close()


def test_without_a_replica_selector_every_consumer_reads_from_the_leader(tmp_path):
    events: list[ev.Event] = []
    cluster = Cluster(3, str(tmp_path / "lab"), seed=7, on_event=events.append, config={"broker.rack": RACKS})
    cluster.create_topic("t", partitions=1, replication_factor=3, replica_assignment=[[1, 2, 3]])
    cluster.produce("t", key="k", value="m0", acks=-1)
    cluster.run_until_idle()

    assert [r.value for r in reader(cluster, "b", "rack-b").poll(timeout_ms=5000)] == [b"m0"]
    assert set(fetch_targets(events, "b")) == {"broker-1"}
    cluster.close()


def test_a_follower_reader_never_sees_past_the_follower_s_high_watermark_and_lags_the_leader_reader(tmp_path):
    cluster, events = rack_cluster(tmp_path)
    cluster.produce("t", key="k", value="m0", acks=-1)
    cluster.run_until_idle()
    near_leader, near_follower = reader(cluster, "a", "rack-a"), reader(cluster, "b", "rack-b")
    near_leader.poll(timeout_ms=5000)
    near_follower.poll(timeout_ms=5000)
    mark = len(events)

    cluster.produce("t", key="k", value="m1", acks=1)
    seen: dict[str, int] = {}
    while len(seen) < 2:
        for name, consumer in (("a", near_leader), ("b", near_follower)):
            if name not in seen and consumer.poll(timeout_ms=10):
                seen[name] = cluster.now_ms

    assert seen["a"] < seen["b"]      # the follower learns the HW a fetch later
    follower_hw = 1
    for e in events[mark:]:
        if isinstance(e, ev.HighWatermarkAdvanced) and e.broker == 2:
            follower_hw = e.new
        if isinstance(e, ev.RecordsConsumed) and e.consumer == "b":
            assert all(r["offset"] < follower_hw for r in e.records), (e, follower_hw)
    cluster.close()


def test_the_consumer_goes_back_to_the_leader_when_its_follower_dies(tmp_path):
    cluster, events = rack_cluster(tmp_path, **{"zookeeper.session.timeout.ms": 6000})
    cluster.produce("t", key="k", value="m0", acks=-1)
    cluster.run_until_idle()
    consumer = reader(cluster, "b", "rack-b", **{"request.timeout.ms": 8000})
    consumer.poll(timeout_ms=5000)

    cluster.kill_broker(2)
    cluster.produce("t", key="k", value="m1", acks=1)
    got = []
    while not got and cluster.now_ms < 60_000:
        got = consumer.poll(timeout_ms=1000)

    assert [r.value for r in got] == [b"m1"]
    back = changes(events, "b")[-1]
    assert (back.replica, back.previous) == (-1, 2) and "no answer from broker 2" in back.reason
    assert fetch_targets(events, "b")[-1] == "broker-1"
    cluster.close()


def test_offset_out_of_range_on_the_follower_sends_the_consumer_back_to_the_leader_keeping_its_position(tmp_path):
    cluster, events = rack_cluster(tmp_path)
    cluster.produce("t", key="k", value="m0", acks=-1)
    cluster.run_until_idle()
    consumer = reader(cluster, "b", "rack-b")
    consumer.poll(timeout_ms=5000)
    cluster.pause_fetcher(2)          # broker 2 stops copying: its log ends at 1
    for value in ("m1", "m2", "m3"):
        cluster.produce("t", key="k", value=value, acks=1)
    cluster.run_for(100)

    mark = len(events)
    consumer.seek(TP, 3)              # past broker 2's log end, still the consumer's preferred replica
    consumer.poll(timeout_ms=1500)       # after the fetch parked on broker 2 (fetch.max.wait.ms) returns

    back = changes(events, "b")[-1]
    assert back.replica == -1 and "OFFSET_OUT_OF_RANGE" in back.reason
    assert consumer.position(TP) == 3                      # no offset reset: the leader is asked instead
    assert [e.strategy for e in events[mark:] if isinstance(e, ev.OffsetsReset) and e.consumer == "b"] == ["seek"]
    cluster.close()


def test_the_preferred_replica_expires_after_metadata_max_age(tmp_path):
    cluster, events = rack_cluster(tmp_path)
    cluster.produce("t", key="k", value="m0", acks=-1)
    cluster.run_until_idle()
    consumer = reader(cluster, "b", "rack-b", **{"metadata.max.age.ms": 2000})
    consumer.poll(timeout_ms=5000)

    consumer.poll(timeout_ms=3000)

    reasons = [e.reason for e in changes(events, "b") if e.replica == -1]
    assert any("metadata.max.age.ms" in r for r in reasons)
    assert changes(events, "b")[-1].replica == 2        # the leader chose broker 2 again
    cluster.close()


def test_racks_place_each_partition_s_replicas_in_different_racks(tmp_path):
    cluster = Cluster(6, str(tmp_path / "lab"), seed=3,
                      config={"broker.rack": "1:a,2:a,3:b,4:b,5:c,6:c"})
    racks = {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"}
    topic = cluster.create_topic("spread", partitions=12, replication_factor=3)
    assert all(len({racks[b] for b in p["replicas"]}) == 3 for p in topic["partitions"])
    cluster.close()


@pytest.mark.parametrize(("racks", "words"), [
    ({"4": "rack-d"}, "broker 4 is not in this cluster"),
    ({"1": 5}, "the rack of broker 1 must be a non-empty text"),
    ({"one": "a"}, "'one' is not a broker id"),
    ({"1": ""}, "the rack of broker 1"),
    ("1=a", "is not broker:rack"),
    (["a", "b"], "expected an object of broker id to rack"),
])
def test_bad_broker_racks_are_refused_naming_the_setting(tmp_path, racks, words):
    with pytest.raises(InvalidConfigError, match="broker.rack") as error:
        Cluster(3, str(tmp_path / "lab"), seed=1, config={"broker.rack": racks})
    assert words in str(error.value)


def test_an_unknown_replica_selector_is_refused_naming_the_setting(tmp_path):
    with pytest.raises(InvalidConfigError, match="replica.selector.class"):
        Cluster(3, str(tmp_path / "lab"), seed=1, config={"replica.selector.class": "nope"})
