"""Every built-in scenario, with the outcome it exists to show — in both metadata modes.

The replication outcomes do not depend on where the metadata lives, so each is checked in
ZooKeeper mode (the scenarios' own) and in KRaft mode. KRaft runs them with dedicated controllers:
the scenarios kill brokers, and in combined mode killing two of three brokers would also take the
controller quorum down (tests/engine/controller and the KRaft scenarios show that on purpose).
"""
from __future__ import annotations

import pytest

from engine.scenarios import load_scenario, run_scenario
from engine.scenarios.runner import builtin_names

MODES = ["zookeeper", "kraft"]


def run(name, tmp_path, metadata="zookeeper"):
    events = []
    scenario = load_scenario(name)
    if metadata == "kraft":
        cluster = scenario.setdefault("cluster", {})
        cluster["metadata"] = "kraft"
        cluster["config"] = {**(cluster.get("config") or {}), "controller.mode": "dedicated"}
    cluster, result = run_scenario(scenario, str(tmp_path / name), trace=events.append)
    cluster.close()
    return result, events


def values(result, replica, topic="t", partition=0):
    part = next(p for p in result["partitions"] if p["topic"] == topic and p["partition"] == partition)
    return [r["value"] for r in part["replica_states"][str(replica)]["records"]]


def partition(result, topic="t", p=0):
    return next(x for x in result["partitions"] if x["topic"] == topic and x["partition"] == p)


def produced(result, value):
    return next(r for r in result["produced"] if r["value"] == value)


@pytest.mark.parametrize("metadata", MODES)
def test_the_notes_hw_story_loses_the_old_leaders_record_6(tmp_path, metadata):
    result, events = run("hw-truncation-story", tmp_path, metadata)
    expected = ["m1", "m2", "m3", "m4", "m5", "m6'", "m7"]
    for broker in (1, 2, 3):
        assert values(result, broker) == expected
    p = partition(result)
    assert p["leader"] == 2 and p["leader_epoch"] == 1 and p["high_watermark"] == 7
    truncations = [e for e in events if e.kind == "log_truncated"]
    assert [e.broker for e in truncations] == [1]  # C had nothing above its HW to cut
    assert any(e.kind == "records_appended" and e.broker == 3 and e.role == "follower"
               and [r["value"] for r in e.records] == ["m5"] for e in events)  # C copies 5 from B
    a_cut = truncations[0]
    assert a_cut.to_offset == 4 and [r["value"] for r in a_cut.removed] == ["m5", "m6"]
    assert produced(result, "m6")["acked"] is True  # acks=1 acknowledged it — and it is gone


@pytest.mark.parametrize("metadata", MODES)
def test_kip101_loss_under_hw_truncation_drops_an_acknowledged_record(tmp_path, metadata):
    result, events = run("kip101-data-loss", tmp_path, metadata)
    assert produced(result, "m2")["acked"] is True
    assert values(result, 1) == values(result, 2) == ["m1"]
    assert partition(result)["leader"] == 1
    assert any(e.kind == "log_truncated" and e.broker == 1 and e.reason == "high-watermark"
               and [r["value"] for r in e.removed] == ["m2"] for e in events)


@pytest.mark.parametrize("metadata", MODES)
def test_kip101_loss_does_not_happen_with_leader_epochs(tmp_path, metadata):
    result, events = run("kip101-data-loss-fixed", tmp_path, metadata)
    assert produced(result, "m2")["acked"] is True
    assert values(result, 1) == values(result, 2) == ["m1", "m2"]
    assert not any(e.kind == "log_truncated" and e.removed for e in events)


@pytest.mark.parametrize("metadata", MODES)
def test_kip101_divergence_under_hw_truncation_leaves_different_records_at_one_offset(tmp_path, metadata):
    result, _ = run("kip101-divergence", tmp_path, metadata)
    assert values(result, 1) == ["m1", "m2"]
    assert values(result, 2) == ["m1", "m3"]
    p = partition(result)
    assert p["replica_states"]["1"]["log_end_offset"] == p["replica_states"]["2"]["log_end_offset"] == 2


@pytest.mark.parametrize("metadata", MODES)
def test_kip101_divergence_is_repaired_with_leader_epochs(tmp_path, metadata):
    result, events = run("kip101-divergence-fixed", tmp_path, metadata)
    assert values(result, 1) == values(result, 2) == ["m1", "m3"]
    cut = next(e for e in events if e.kind == "log_truncated" and e.broker == 1)
    assert cut.reason == "leader-epoch" and [r["value"] for r in cut.removed] == ["m2"]


@pytest.mark.parametrize("metadata", MODES)
def test_a_lagging_follower_leaves_the_isr_and_comes_back(tmp_path, metadata):
    result, events = run("isr-shrink-expand", tmp_path, metadata)
    shrunk = next(e for e in events if e.kind == "isr_shrunk")
    expanded = next(e for e in events if e.kind == "isr_expanded")
    assert shrunk.removed == [3] and shrunk.isr == [1, 2]
    assert expanded.added == [3] and expanded.isr == [1, 2, 3] and expanded.seq > shrunk.seq
    # the HW waited for broker 3 while it was in the ISR, then moved on without it
    hw_moves = [e for e in events if e.kind == "high_watermark_advanced" and e.broker == 1]
    assert any(e.new == 5 and shrunk.seq < e.seq < expanded.seq for e in hw_moves)
    assert partition(result)["isr"] == [1, 2, 3] and values(result, 3) == ["m1", "m2", "m3", "m4", "m5"]


@pytest.mark.parametrize("metadata", MODES)
def test_unclean_election_loses_acknowledged_records(tmp_path, metadata):
    result, events = run("unclean-election-loss", tmp_path, metadata)
    assert produced(result, "m2")["acked"] and produced(result, "m3")["acked"]
    elected = next(e for e in events if e.kind == "leader_elected" and e.leader == 3)
    assert elected.unclean and elected.reason == "unclean"
    for broker in (1, 2, 3):
        assert values(result, broker) == ["m1", "m4"]


@pytest.mark.parametrize("metadata", MODES)
def test_acks_compared_shows_each_setting_s_contract(tmp_path, metadata):
    result, _ = run("acks-compared", tmp_path, metadata)
    assert produced(result, "healthy-acks0") == {**produced(result, "healthy-acks0"), "acked": True, "offset": -1}
    assert produced(result, "healthy-acksall")["acked"]
    assert produced(result, "stalled-acks1")["acked"]            # answered after the leader's write...
    assert partition(result)["high_watermark"] == 3             # ...but never committed
    assert produced(result, "stalled-acksall")["error"] == "REQUEST_TIMED_OUT"
    assert produced(result, "alone-acksall")["error"] == "NOT_ENOUGH_REPLICAS"
    assert produced(result, "alone-acks1")["acked"]
    assert "alone-acksall" not in values(result, 1)              # refused before it was written


def test_every_builtin_scenario_has_an_outcome_test():
    import pathlib
    here = pathlib.Path(__file__).parent
    tests_text = "".join(p.read_text() for p in here.glob("test_*.py"))
    untested = [name for name in builtin_names() if f'"{name}"' not in tests_text]
    assert not untested, f"built-in scenarios without a test: {untested}"


@pytest.mark.parametrize("name", ["hw-truncation-story", "kip101-divergence-fixed"])
def test_the_same_scenario_twice_gives_the_same_events_and_the_same_bytes(tmp_path, name):
    import os
    runs = []
    for attempt in ("a", "b"):
        events = []
        data_dir = tmp_path / attempt
        cluster, result = run_scenario(load_scenario(name), str(data_dir), trace=events.append)
        cluster.close()
        files = {}
        for root, _, names in os.walk(data_dir):
            for n in names:
                full = os.path.join(root, n)
                files[os.path.relpath(full, data_dir)] = open(full, "rb").read()
        runs.append(([e.to_dict() for e in events], files, result))
    (events_a, files_a, result_a), (events_b, files_b, result_b) = runs
    assert events_a == events_b
    assert files_a.keys() == files_b.keys() and files_a == files_b
    assert any(name.endswith(".log") for name in files_a)
    assert result_a == result_b
