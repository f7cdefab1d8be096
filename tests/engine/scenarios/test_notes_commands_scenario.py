"""Built-in scenario "notes-commands" (lesson 02): note 000's commands and what each would print.

Played step by step as the lesson plays it (test_lesson_scenarios.play: the runner's own
`run_step`), each fact checked at the step where the lesson asks about it:

- `GetOffsetShell --time -1` is each partition's high watermark: 2, 0, 2 while broker 1, the
  follower of mytest-1, does not fetch (step 5), though every leader's log ends at 2;
- `kafka-console-consumer --group test --from-beginning` twice: the first run (console-1) reads
  all six lines and commits 2 on each partition, the second (console-2) finds those commits and
  reads nothing;
- `kafka-consumer-groups --describe --group test` with nobody left in the group and two more
  lines on mytest-2: LAG 0, 0, 2 (the HW minus the committed offset);
- `--time -2` (the log start offsets) stays 0: reading deletes nothing.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from engine.clients.partitioner import partition_for_key
from engine.cluster import Cluster
from engine.inspect.cluster import cluster_state
from engine.inspect.groups import consumed, describe_group
from engine.scenarios import load_scenario, run_scenario
from tests.engine.scenarios.test_lesson_scenarios import Played, play

NAME = "notes-commands"
TOPIC = "mytest"
PARTITIONS = (0, 1, 2)
SIX_LINES = ["alice-1", "alice-2", "carol-1", "carol-2", "dave-1", "dave-2"]


def part(cluster: Cluster, broker: int, p: int):
    return cluster.brokers[broker].partitions[(TOPIC, p)]


def high_watermarks(cluster: Cluster) -> list[int]:
    """What `--time -1` prints: the leader's HW, per partition."""
    return [part(cluster, cluster.leader_of(TOPIC, p), p).high_watermark for p in PARTITIONS]


def log_ends(cluster: Cluster) -> list[int]:
    return [part(cluster, cluster.leader_of(TOPIC, p), p).log_end_offset for p in PARTITIONS]


def replicas(cluster: Cluster) -> dict[tuple[int, int], tuple[int, int]]:
    """(partition, broker) -> (LEO, HW) of every replica."""
    return {(p, b): (part(cluster, b, p).log_end_offset, part(cluster, b, p).high_watermark)
            for p in PARTITIONS for b in cluster.partition_state(TOPIC, p)["replicas"]}


def group(cluster: Cluster) -> dict:
    return describe_group(cluster, "test")


@pytest.fixture
def played(tmp_path) -> Played:
    look: dict[int, Callable[[Cluster], Any]] = {
        5: lambda c: (high_watermarks(c), log_ends(c), replicas(c), c.partition_state(TOPIC, 1)["isr"]),
        7: lambda c: replicas(c),
        10: lambda c: (group(c), len(consumed(c)["console-1"])),
        11: group, 12: group, 14: group, 15: group,
        17: lambda c: (group(c), high_watermarks(c), log_ends(c)),
    }
    p = play(NAME, tmp_path, look)
    yield p
    p.cluster.close()


def values(records: list[dict]) -> list[str]:
    return sorted(r["value"] for r in records)


def test_the_runner_plays_it_without_errors_or_warnings_on_a_seeded_three_broker_cluster(tmp_path):
    scenario = load_scenario(NAME)
    assert scenario["name"] == NAME and scenario["cluster"] == {"brokers": 3, "seed": 102}
    summary, _, rest = scenario["description"].partition("\n")
    assert summary.endswith(".") and rest
    cluster, result = run_scenario(scenario, str(tmp_path))
    cluster.close()
    assert result["step_errors"] == [] and result["step_warnings"] == []
    assert len(scenario["steps"]) == 18


def test_mytest_has_three_partitions_each_led_by_another_broker_with_one_follower(played):
    created = played.events("topic_created", step=0, topic=TOPIC)[0]
    assert created.assignment == [[2, 3], [3, 1], [1, 2]]
    elected = {e.partition: e.leader for e in played.events("leader_elected", step=0, topic=TOPIC)}
    assert elected == {0: 2, 1: 3, 2: 1}


def test_the_six_keyed_lines_land_two_per_partition_by_key(played):
    c = played.cluster
    for key, p in (("alice", 0), ("dave", 1), ("carol", 2)):
        assert partition_for_key(key.encode(), 3) == p
        log = part(c, c.leader_of(TOPIC, p), p).log
        assert [r.value.decode() for r in log.records_from(0)][:2] == [f"{key}-1", f"{key}-2"]
    produced = cluster_state(c, with_records=False)["produced"]
    assert [(r["value"], r["partition"], r["offset"], r["acked"]) for r in produced[:6]] == [
        ("alice-1", 0, 0, True), ("alice-2", 0, 1, True), ("dave-1", 1, 0, True), ("dave-2", 1, 1, True),
        ("carol-1", 2, 0, True), ("carol-2", 2, 1, True)]


def test_time_minus_one_is_the_high_watermark_2_0_2_while_mytest_1_s_follower_does_not_fetch(played):
    hws, leos, reps, isr = played.seen[5]
    assert hws == [2, 0, 2]                      # what GetOffsetShell --time -1 prints
    assert leos == [2, 2, 2]                     # every leader holds its two lines
    assert reps[(1, 3)] == (2, 0) and reps[(1, 1)] == (0, 0)   # broker 1 has copied nothing
    assert isr == [3, 1]                         # still in the ISR: the HW waits for it
    assert not played.events("records_appended", step=5, broker=1, role="follower")
    # once broker 1 fetches again, every replica is at LEO 2, HW 2
    assert set(played.seen[7].values()) == {(2, 2)}
    assert [e.new for e in played.events("high_watermark_advanced", step=7, broker=3, topic=TOPIC)] == [2]


def test_the_first_run_starts_at_the_earliest_offsets_reads_all_six_lines_and_commits_2_each(played):
    resets = played.events("offsets_reset", consumer="console-1")
    assert sorted((e.partition, e.strategy, e.offset) for e in resets) == [(p, "earliest", 0) for p in PARTITIONS]
    received = played.events("assignment_received", step=8, consumer="console-1")
    assert received[-1].assignment == ["mytest-0", "mytest-1", "mytest-2"]
    polled = [r for step in (8, 9, 10) for e in played.events("records_consumed", step=step, consumer="console-1")
              for r in e.records]
    assert values(polled) == SIX_LINES
    assert sorted((r["partition"], r["offset"]) for r in polled) == [(p, o) for p in PARTITIONS for o in (0, 1)]
    described, count = played.seen[10]
    assert count == 6 and described["committed"] == {}          # nothing committed before step 11
    assert played.seen[11]["committed"] == {"mytest-0": 2, "mytest-1": 2, "mytest-2": 2}
    assert played.seen[11]["lag"] == {"mytest-0": 0, "mytest-1": 0, "mytest-2": 0}
    assert not played.events("offsets_committed", step=12)      # no auto-commit at leave
    assert played.seen[12]["state"] == "Empty" and played.seen[12]["members"] == []
    assert played.seen[12]["committed"] == played.seen[11]["committed"]


def test_the_second_run_resumes_at_the_commits_and_reads_nothing(played):
    assert not played.events("offsets_reset", consumer="console-2")   # the commits win over "earliest"
    received = played.events("assignment_received", step=13, consumer="console-2")
    assert received[-1].assignment == ["mytest-0", "mytest-1", "mytest-2"]
    assert played.seen[14]["state"] == "Stable"
    assert [m["member"] for m in played.seen[14]["members"]] == ["console-2"]
    assert not played.events("records_consumed", consumer="console-2")
    assert consumed(played.cluster)["console-2"] == []
    assert played.seen[15]["state"] == "Empty" and played.seen[15]["members"] == []
    assert played.seen[15]["committed"] == {"mytest-0": 2, "mytest-1": 2, "mytest-2": 2}
    assert len(consumed(played.cluster)["console-1"]) == 6


def test_describe_shows_lag_0_0_2_for_the_two_lines_nobody_has_read(played):
    described, hws, leos = played.seen[17]
    assert hws == leos == [2, 2, 4]
    assert described["state"] == "Empty" and described["members"] == []
    assert described["committed"] == {"mytest-0": 2, "mytest-1": 2, "mytest-2": 2}
    assert described["lag"] == {"mytest-0": 0, "mytest-1": 0, "mytest-2": 2}
    assert sum(described["lag"].values()) == 2
    produced = cluster_state(played.cluster, with_records=False)["produced"]
    assert [(r["value"], r["partition"], r["offset"]) for r in produced[6:]] == [("erin-1", 2, 2), ("erin-2", 2, 3)]


def test_time_minus_two_stays_0_reading_deleted_nothing(played):
    c = played.cluster
    for p in PARTITIONS:
        for broker in c.partition_state(TOPIC, p)["replicas"]:
            assert part(c, broker, p).log.log_start_offset == 0
    assert [r.value.decode() for r in part(c, 1, 2).log.records_from(0)] == ["carol-1", "carol-2", "erin-1", "erin-2"]
