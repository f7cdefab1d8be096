"""The consumer-group and delivery-semantics built-in scenarios, each with the outcome it exists to show —
in both metadata modes: a group's story does not depend on where the cluster's metadata lives, so each
outcome is checked in ZooKeeper mode (the scenarios' own) and in KRaft (combined controllers)."""
from __future__ import annotations

import pytest

from engine.inspect.groups import consumed, describe_groups, processed, sinks
from engine.scenarios import load_scenario, run_scenario

MODES = ["zookeeper", "kraft"]


def run(name, tmp_path, metadata="zookeeper"):
    events = []
    scenario = load_scenario(name)
    if metadata == "kraft":
        scenario.setdefault("cluster", {})["metadata"] = "kraft"
    cluster, result = run_scenario(scenario, str(tmp_path / name), trace=events.append)
    outcome = {"result": result, "groups": {g["group"]: g for g in describe_groups(cluster)},
               "consumed": consumed(cluster), "processed": processed(cluster), "sinks": sinks(cluster)}
    cluster.close()
    return outcome, events


def of_kind(events, kind, **match):
    return [e for e in events if e.kind == kind and all(getattr(e, k) == v for k, v in match.items())]


def values(records):
    return [r["value"] for r in records]


def assignment(group):
    return {m["member"]: m["assignment"] for m in group["members"]}


@pytest.mark.parametrize("metadata", MODES)
def test_a_joining_member_triggers_a_rebalance_and_range_splits_the_partitions(tmp_path, metadata):
    out, events = run("group-member-joins", tmp_path, metadata)
    g = out["groups"]["g"]
    assert g["state"] == "Stable" and g["generation"] == 2 and g["protocol"] == "range"
    assert assignment(g) == {"c1": ["t-0", "t-1"], "c2": ["t-2"]}
    first = of_kind(events, "assignment_received", consumer="c1")[0]
    assert first.generation == 1 and first.assignment == ["t-0", "t-1", "t-2"]
    # c1 waited the initial rebalance delay before generation 1 was formed
    join = of_kind(events, "member_joined")[0]
    stable = of_kind(events, "rebalance_completed", generation=1)[0]
    assert stable.time_ms - join.time_ms >= 3000
    started = of_kind(events, "rebalance_started", generation=1)[0]
    assert "joined" in started.reason
    revoked = of_kind(events, "partitions_revoked", consumer="c1")[0]
    assert revoked.partitions == ["t-0", "t-1", "t-2"] and not revoked.lost and revoked.seq > started.seq
    everything = values(out["consumed"]["c1"]) + values(out["consumed"]["c2"])
    assert sorted(everything) == ["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"]   # nothing twice
    assert values(out["consumed"]["c2"]) == ["m8"]
    assert g["lag"] == {"t-0": 0, "t-1": 0, "t-2": 0}


@pytest.mark.parametrize("metadata", MODES)
def test_a_member_that_leaves_is_removed_at_once(tmp_path, metadata):
    out, events = run("group-member-leaves", tmp_path, metadata)
    g = out["groups"]["g"]
    assert g["generation"] == 3 and assignment(g) == {"c1": ["t-0", "t-1", "t-2"]}
    left = of_kind(events, "consumer_left_group", consumer="c2")[0]
    removed = of_kind(events, "member_removed", client_id="c2")[0]
    assert removed.reason == "left the group: the consumer is being closed"
    assert removed.time_ms - left.time_ms < 100                 # no session timeout to wait for
    assert values(out["consumed"]["c2"]) == ["m4"] and "m5" in values(out["consumed"]["c1"])
    assert "m4" not in values(out["consumed"]["c1"])            # c2 committed on close


@pytest.mark.parametrize("metadata", MODES)
def test_a_crashed_member_is_removed_after_the_session_timeout(tmp_path, metadata):
    out, events = run("group-member-crashes", tmp_path, metadata)
    crashed = of_kind(events, "consumer_crashed", consumer="c2")[0]
    removed = of_kind(events, "member_removed", client_id="c2")[0]
    assert removed.reason == "session timeout (45000 ms) expired without a heartbeat"
    assert 42000 <= removed.time_ms - crashed.time_ms <= 45000   # its last heartbeat came a little before
    g = out["groups"]["g"]
    assert assignment(g) == {"c1": ["t-0", "t-1", "t-2"]} and g["generation"] == 3
    # c2 consumed m4 but died before auto-committing it: c1 reads it again
    assert "m4" in values(out["consumed"]["c2"]) and "m4" in values(out["consumed"]["c1"])
    assert "m5" in values(out["consumed"]["c1"])


@pytest.mark.parametrize("metadata", MODES)
def test_a_member_too_slow_for_max_poll_interval_leaves_and_its_commit_fails(tmp_path, metadata):
    out, events = run("group-member-too-slow", tmp_path, metadata)
    left = of_kind(events, "consumer_left_group", consumer="c2")[0]
    assert left.reason == "consumer poll timeout has expired."
    removed = of_kind(events, "member_removed", client_id="c2")[0]
    assert removed.reason == "left the group: consumer poll timeout has expired." and removed.seq > left.seq
    assert not of_kind(events, "member_removed", reason="session timeout (45000 ms) expired without a heartbeat")
    failed = of_kind(events, "offset_commit_failed", consumer="c2")[0]
    assert failed.error == "COMMIT_FAILED" and failed.time_ms > left.time_ms
    lost = of_kind(events, "partitions_revoked", consumer="c2", lost=True)
    assert lost and lost[0].partitions == ["t-2"]
    # what c2 processed without being able to commit, c1 processes again
    assert set(values(out["processed"]["c2"])) <= set(values(out["processed"]["c1"]))
    assert values(out["processed"]["c1"]) == ["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"]


@pytest.mark.parametrize("metadata", MODES)
def test_the_leader_rebalances_when_the_topic_gains_partitions(tmp_path, metadata):
    out, events = run("group-topic-gains-partitions", tmp_path, metadata)
    g = out["groups"]["g"]
    assert assignment(g) == {"c1": ["t-0", "t-1"], "c2": ["t-2", "t-3"]}
    added = of_kind(events, "partitions_added", topic="t")[0]
    gen3 = of_kind(events, "rebalance_started", generation=2)[0]
    assert gen3.time_ms > added.time_ms and "leader" in gen3.reason
    assert sorted(values(out["consumed"]["c2"])) == ["m3", "m4"]


@pytest.mark.parametrize("metadata", MODES)
def test_a_pattern_subscription_picks_up_a_new_topic(tmp_path, metadata):
    out, events = run("group-pattern-new-topic", tmp_path, metadata)
    g = out["groups"]["g"]
    assert assignment(g) == {"c1": ["orders-eu-0", "orders-us-0"], "c2": ["orders-eu-1", "orders-us-1"]}
    everything = values(out["consumed"]["c1"]) + values(out["consumed"]["c2"])
    assert sorted(everything) == ["eu1", "eu2", "eu3", "eu4", "us1", "us2", "us3", "us4"]
    assert "p1" not in everything                                   # payments does not match
    gen3 = of_kind(events, "rebalance_completed", generation=3)[0]   # c1 noticed first
    assert {tuple(v) for v in gen3.assignment.values()} == {("orders-eu-0", "orders-us-0", "orders-us-1"),
                                                             ("orders-eu-1",)}


@pytest.mark.parametrize("metadata", MODES)
def test_more_consumers_than_partitions_leaves_one_idle(tmp_path, metadata):
    out, events = run("group-more-consumers-than-partitions", tmp_path, metadata)
    g = out["groups"]["g"]
    assert assignment(g) == {"c1": ["t-0"], "c2": ["t-1"], "c3": []}
    idle = of_kind(events, "assignment_received", consumer="c3")[-1]
    assert idle.idle and idle.assignment == []
    assert out["consumed"]["c3"] == []


@pytest.mark.parametrize("metadata", MODES)
def test_the_group_carries_on_when_its_coordinator_dies(tmp_path, metadata):
    out, events = run("group-coordinator-failover", tmp_path, metadata)
    killed = of_kind(events, "broker_crashed")[0].broker
    loaded = of_kind(events, "coordinator_loaded", partition=3)[0]
    assert loaded.broker != killed and loaded.groups == ["g"] and loaded.offsets == 3
    moved = of_kind(events, "coordinator_discovered", consumer="c1")[-1]
    assert moved.previous == killed and moved.coordinator == loaded.broker
    g = out["groups"]["g"]
    assert g["coordinator"] == loaded.broker and g["state"] == "Stable"
    assert g["generation"] == 2 and not of_kind(events, "rebalance_started", generation=2)   # no rebalance
    everything = values(out["consumed"]["c1"]) + values(out["consumed"]["c2"])
    assert sorted(everything) == ["m1", "m2", "m3", "m4", "m5", "m6"]
    assert g["committed"] == {"t-0": 2, "t-1": 2, "t-2": 2} and set(g["lag"].values()) == {0}


@pytest.mark.parametrize("metadata", MODES)
def test_commit_before_processing_then_crash_loses_records(tmp_path, metadata):
    out, _ = run("delivery-at-most-once", tmp_path, metadata)
    assert values(out["consumed"]["c1"]) == ["m1", "m2", "m3", "m4", "m5", "m6"]
    assert values(out["sinks"]["db"]["rows"]) == ["m1", "m2"]      # m3..m6: consumed, never processed
    assert out["consumed"]["c2"] == []                              # the committed offset was already 6
    assert out["groups"]["g"]["committed"] == {"t-0": 6}


@pytest.mark.parametrize("metadata", MODES)
def test_commit_after_processing_then_crash_processes_records_twice(tmp_path, metadata):
    out, _ = run("delivery-at-least-once", tmp_path, metadata)
    db = out["sinks"]["db"]
    assert values(db["rows"]) == ["m1", "m2", "m3", "m4", "m1", "m2", "m3", "m4", "m5", "m6"]
    assert values(db["duplicates"]) == ["m1", "m2", "m3", "m4"]
    assert out["groups"]["g"]["committed"] == {"t-0": 6}


@pytest.mark.parametrize("metadata", MODES)
def test_an_idempotent_sink_turns_at_least_once_into_an_exactly_once_effect(tmp_path, metadata):
    out, _ = run("delivery-idempotent-sink", tmp_path, metadata)
    db = out["sinks"]["db"]
    assert values(db["rows"]) == ["m1", "m2", "m3", "m4", "m5", "m6"]
    assert values(db["duplicates"]) == ["m1", "m2", "m3", "m4"]      # delivered twice, stored once
    assert len(out["processed"]["c1"]) + len(out["processed"]["c2"]) == 10


@pytest.mark.parametrize("metadata", MODES)
def test_a_rebalance_between_processing_and_committing_duplicates_records(tmp_path, metadata):
    out, events = run("delivery-duplicates-after-rebalance", tmp_path, metadata)
    removed = of_kind(events, "member_removed", client_id="c1")[0]
    assert removed.reason == "session timeout (10000 ms) expired without a heartbeat"
    assert of_kind(events, "offset_commit_failed", consumer="c1")
    db = out["sinks"]["db"]
    assert values(db["duplicates"]) == ["a1", "a2", "a3", "a4", "a5", "a6"]
    assert set(values(out["processed"]["c1"])) == {"a1", "a2", "a3", "a4", "a5", "a6"}
    assert assignment(out["groups"]["g"]) == {"c2": ["t-0", "t-1"]}


def test_a_group_scenario_replays_to_the_same_events(tmp_path):
    runs = []
    for attempt in ("a", "b"):
        events = []
        cluster, result = run_scenario(load_scenario("group-member-joins"), str(tmp_path / attempt),
                                       trace=events.append)
        runs.append(([e.to_dict() for e in events], describe_groups(cluster), consumed(cluster)))
        cluster.close()
    assert runs[0] == runs[1]


def test_consumer_steps_drive_a_consumer_that_polls_only_when_told(tmp_path):
    scenario = {"cluster": {"brokers": 3, "seed": 2, "config": {"offsets.topic.num.partitions": 3}},
                "steps": [
                    {"create_topic": {"topic": "t", "partitions": 2, "replication_factor": 3}},
                    {"produce": {"topic": "t", "partition": 0, "values": ["m1", "m2", "m3"]}},
                    {"consumer_join": {"group": "g", "member": "c1", "topics": ["t"], "assignor": "roundrobin",
                                       "config": {"auto.offset.reset": "earliest", "enable.auto.commit": False,
                                                  "max.poll.records": 2}}},
                    {"consumer_poll": {"member": "c1", "max_records": 2}},
                    {"consumer_commit": {"member": "c1"}},
                    {"add_partitions": {"topic": "t", "count": 3}},
                    {"consumer_poll": {"member": "nobody"}, "expect_error": True},
                    {"consumer_leave": {"member": "c1"}}]}
    events = []
    cluster, result = run_scenario(scenario, str(tmp_path / "s"), trace=events.append)
    [group] = describe_groups(cluster)
    assert group["state"] == "Empty" and group["generation"] == 2
    assert of_kind(events, "assignment_received")[0].protocol == "roundrobin"
    assert group["committed"]["t-0"] == len([r for r in consumed(cluster)["c1"] if r["partition"] == 0])
    assert result["step_errors"][0]["step"] == 6 and "no consumer 'nobody'" in result["step_errors"][0]["error"]
    assert cluster.describe_topic("t")["partitions"][2]["partition"] == 2
    cluster.close()


def test_a_consumer_error_fails_its_step_with_kafka_s_error_name(tmp_path):
    scenario = {"cluster": {"brokers": 1, "seed": 2, "config": {"offsets.topic.num.partitions": 1}},
                "steps": [
                    {"create_topic": {"topic": "t"}},
                    {"consumer_join": {"group": "g", "member": "c1", "topics": ["t"],
                                       "config": {"auto.offset.reset": "none"}}, "expect_error": True}]}
    cluster, result = run_scenario(scenario, str(tmp_path / "s"))
    assert result["step_errors"][0]["kafka_error"] == "NO_OFFSET_FOR_PARTITION"
    cluster.close()
