"""The producer's built-in scenarios, with the outcome each exists to show."""
from __future__ import annotations

import pytest

from engine.scenarios import load_scenario, run_scenario

PRODUCER_SCENARIOS = ["producer-duplicates", "producer-reordering", "partitioner-sticky-vs-round-robin"]


MODES = ["zookeeper", "kraft"]


def run(name, tmp_path, metadata="zookeeper"):
    """The scenario in its own mode (ZooKeeper) or in KRaft (dedicated controllers: the scenarios
    kill brokers, which in combined mode would also be voters)."""
    events = []
    scenario = load_scenario(name)
    if metadata == "kraft":
        cluster = scenario.setdefault("cluster", {})
        cluster["metadata"] = "kraft"
        cluster["config"] = {**(cluster.get("config") or {}), "controller.mode": "dedicated"}
    cluster, result = run_scenario(scenario, str(tmp_path / name), trace=events.append)
    produced = {p: cluster.producers[p].records() for p in cluster.producers}
    cluster.close()
    return result, events, produced


def values(result, topic, partition=0):
    part = next(p for p in result["partitions"] if p["topic"] == topic and p["partition"] == partition)
    logs = {replica: [r["value"] for r in state["records"]] for replica, state in part["replica_states"].items()}
    assert len({tuple(v) for v in logs.values()}) == 1, f"replicas of {topic}-{partition} differ: {logs}"
    return next(iter(logs.values()))


def record(produced, producer, value):
    return next(r for r in produced[producer] if r["value"] == value)


@pytest.mark.parametrize("metadata", MODES)
def test_without_idempotence_a_lost_answer_duplicates_a_record_and_with_it_does_not(tmp_path, metadata):
    result, events, produced = run("producer-duplicates", tmp_path, metadata)
    assert values(result, "plain") == ["m1", "m2", "m3", "m2"]
    assert values(result, "idempotent") == ["m1", "m2", "m3"]
    retried = [e for e in events if e.kind == "producer_batch_retried"]
    assert [(e.producer, e.error) for e in retried] == [("producer-plain", "NETWORK_EXCEPTION"),
                                                        ("producer-idempotent", "NETWORK_EXCEPTION")]
    duplicates = [e for e in events if e.kind == "duplicate_batch_ignored"]
    assert [(e.topic, e.base_offset, e.first_sequence) for e in duplicates] == [("idempotent", 1, 1)]
    # Both producers believe m2 was written once; only the idempotent one is right about where.
    assert record(produced, "plain", "m2")["offset"] == 3
    assert record(produced, "idempotent", "m2")["offset"] == 1
    assert all(r["acked"] and r["error"] is None for records in produced.values() for r in records)
    assert result["step_errors"] == []


@pytest.mark.parametrize("metadata", MODES)
def test_without_idempotence_a_retry_lands_after_a_later_batch_and_with_it_order_holds(tmp_path, metadata):
    result, events, produced = run("producer-reordering", tmp_path, metadata)
    assert values(result, "unordered") == ["w", "b", "a"]
    assert values(result, "ordered") == ["w", "a", "b"]
    rejected = [e for e in events if e.kind == "produce_sequence_rejected"]
    assert [(e.topic, e.base_sequence, e.expected_sequence, e.error) for e in rejected] == [
        ("ordered", 2, 1, "OUT_OF_ORDER_SEQUENCE_NUMBER")]
    assert [record(produced, "ordered", v)["offset"] for v in ("w", "a", "b")] == [0, 1, 2]
    assert [record(produced, "unordered", v)["offset"] for v in ("w", "a", "b")] == [0, 2, 1]


def test_sticky_partitioning_sends_fewer_larger_batches_than_round_robin(tmp_path):
    # ZooKeeper mode only: the exact batch sizes it checks depend on how soon the producer's first
    # metadata answer comes, which differs in KRaft (a broker answers from its own image).
    result, events, produced = run("partitioner-sticky-vs-round-robin", tmp_path)
    batches = {}
    for e in events:
        if e.kind == "producer_batch_sent":
            batches.setdefault(e.producer, []).append(e.records_count)
    assert batches["producer-round-robin"] == [2] * 30
    assert len(batches["producer-sticky"]) <= 15 and sum(batches["producer-sticky"]) == 60
    expected = [f"r{i:02d}" for i in range(1, 61)]
    rr = [values(result, "round-robin", p) for p in range(3)]
    assert sorted(sum(rr, [])) == expected and all(len(v) == 20 for v in rr)
    assert all(v == expected[expected.index(v[0])::3] for v in rr)        # every third record
    sticky = [values(result, "sticky", p) for p in range(3)]
    assert sorted(sum(sticky, [])) == expected
    runs = []                                                              # consecutive records together
    for r in produced["sticky"]:
        if not runs or runs[-1][0] != r["partition"]:
            runs.append([r["partition"], 0])
        runs[-1][1] += 1
    assert len(runs) <= 5 and min(n for _, n in runs[:-1]) >= 13


@pytest.mark.parametrize("name", PRODUCER_SCENARIOS)
def test_a_producer_scenario_replays_exactly(tmp_path, name):
    first, events_a, produced_a = run(name, tmp_path / "a")
    second, events_b, produced_b = run(name, tmp_path / "b")
    assert [e.to_dict() for e in events_a] == [e.to_dict() for e in events_b]
    assert produced_a == produced_b and first == second
