"""Each source of the query language reads a real cluster (lesson 13's scenario, played by the
scenario runner) and agrees with the cluster's own state and disk; each item carries the reference
the page highlights as evidence."""
from __future__ import annotations

import os

import pytest

from engine.inspect.cluster import cluster_state
from lessons import queries
from tests.lessons.conftest import Played


def evaluate(played: Played, query: dict, beat_events: list[dict] | None = None) -> queries.Answer:
    queries.check(query)
    return queries.evaluate(query, played.world(beat_events))


# -- partitions, replicas, brokers, produced --------------------------------------------------------
def test_a_partition_item_agrees_with_the_clusters_state(story: Played) -> None:
    state = story.partition()
    leader = story.replica_state(state["leader"])
    found = evaluate(story, {"from": "partitions", "where": {"tp": "t-0"}, "pick": "one"})
    assert found.value == {
        "topic": "t", "partition": 0, "tp": "t-0", "leader": state["leader"], "leader_epoch": state["leader_epoch"],
        "replicas": state["replicas"], "isr": state["isr"],
        "osr": [r for r in state["replicas"] if r not in state["isr"]],
        "high_watermark": state["high_watermark"], "log_end_offset": leader["log_end_offset"],
        "log_start_offset": state["log_start_offset"]}
    assert found.evidence == [{"kind": "partition", "tp": "t-0"}]


def test_the_osr_holds_the_replicas_that_fell_out_of_the_isr(story_after_election: Played) -> None:
    state = story_after_election.partition()
    osr = story_after_election.answer({"from": "partitions", "pick": "one", "field": "osr"})
    assert osr == [r for r in state["replicas"] if r not in state["isr"]]
    assert osr, "after the election the dead broker 1 is out of the ISR"


def test_every_replica_item_agrees_with_its_replicas_state(story: Played) -> None:
    replicas = evaluate(story, {"from": "replicas", "where": {"tp": "t-0"}})
    state = story.partition()
    assert [r["broker"] for r in replicas.value] == state["replicas"]
    for item in replicas.value:
        replica = story.replica_state(item["broker"])
        assert item["log_end_offset"] == replica["log_end_offset"]
        assert item["high_watermark"] == replica["high_watermark"]
        assert item["records"] == replica["records"]
        assert item["values"] == [r["value"] for r in replica["records"]]
        assert item["offsets"] == [r["offset"] for r in replica["records"]]
        assert item["leader_epoch_cache"] == replica["leader_epoch_cache"]
        assert item["leader"] == (item["broker"] == state["leader"])
        assert item["in_isr"] == (item["broker"] in state["isr"])
    assert replicas.evidence == [{"kind": "replica", "tp": "t-0", "broker": b} for b in state["replicas"]]


def test_a_dead_brokers_replica_is_there_without_a_log(story_after_election: Played) -> None:
    dead = story_after_election.answer({"from": "replicas", "where": {"alive": False}, "pick": "one"})
    assert story_after_election.replica_state(dead["broker"]) == {"alive": False}
    assert "log_end_offset" not in dead and "values" not in dead


def test_brokers_agree_with_the_clusters_state(story_after_election: Played) -> None:
    found = evaluate(story_after_election, {"from": "brokers"})
    state = cluster_state(story_after_election.cluster)["brokers"]
    assert found.value == [{"broker": b["id"], "alive": b["alive"], "controller": b["controller"]} for b in state]
    assert found.evidence == [{"kind": "broker", "broker": b["id"]} for b in state]


def test_produced_records_agree_with_the_clusters_state(story: Played) -> None:
    produced = story.answer({"from": "produced"})
    state = cluster_state(story.cluster)["produced"]
    assert produced == [dict(r, tp=f"{r['topic']}-{r['partition']}") for r in state]
    assert story.answer({"from": "produced", "where": {"acks": 1}, "field": "value"}) == \
        [r["value"] for r in state if r["acks"] == 1]


def test_a_topic_without_groups_has_no_members_or_commits(story: Played) -> None:
    assert cluster_state(story.cluster)["groups"] == []
    for source in ("members", "committed", "consumed", "processed"):
        assert story.answer({"from": source, "pick": "count"}) == 0


# -- events -----------------------------------------------------------------------------------------
def test_an_event_is_found_with_its_seq_as_evidence(story: Played) -> None:
    elected = [e for e in story.events if e["kind"] == "leader_elected"]
    found = evaluate(story, {"from": "events", "where": {"kind": "leader_elected", "tp": "t-0"}, "pick": "last"})
    assert found.value["leader"] == elected[-1]["leader"] == story.partition()["leader"]
    assert found.evidence == [{"kind": "event", "seq": elected[-1]["seq"]}]


def test_every_matching_event_is_evidence(story: Played) -> None:
    appended = [e for e in story.events if e["kind"] == "records_appended" and e.get("broker") == 3]
    found = evaluate(story, {"from": "events", "where": {"kind": "records_appended", "broker": 3}, "pick": "count"})
    assert found.value == len(appended) > 0
    assert found.evidence == [{"kind": "event", "seq": e["seq"]} for e in appended]


def test_an_event_item_gets_its_tp_and_keeps_its_fields(story: Played) -> None:
    (truncated,) = [e for e in story.events if e["kind"] == "log_truncated"]
    assert truncated["tp"] == f"{truncated['topic']}-{truncated['partition']}"
    assert truncated["_ref"] == {"kind": "event", "seq": truncated["seq"]}
    found = story.answer({"from": "events", "where": {"kind": "log_truncated"}, "pick": "one"})
    assert "_ref" not in found
    assert found == {k: v for k, v in truncated.items() if k != "_ref"}


def test_events_are_the_beats_unless_the_query_asks_for_the_lessons(story: Played) -> None:
    beat_events = story.events[-10:]
    count = {"from": "events", "pick": "count"}
    assert evaluate(story, count, beat_events).value == 10
    assert evaluate(story, dict(count, scope="lesson"), beat_events).value == len(story.events)


# -- segments and checkpoints, read from the brokers' disks -----------------------------------------
def test_segments_are_the_log_files_on_each_brokers_disk(story: Played) -> None:
    found = evaluate(story, {"from": "segments", "where": {"tp": "t-0"}})
    for broker in story.cluster.brokers.values():
        on_disk = sorted(name for name in os.listdir(os.path.join(broker.data_dir, "t-0")) if name.endswith(".log"))
        mine = [s for s in found.value if s["broker"] == broker.id]
        assert [s["file"] for s in mine] == on_disk
        assert [s["base_offset"] for s in mine] == [int(name[:-4]) for name in on_disk]
        assert [s["active"] for s in mine] == [False] * (len(mine) - 1) + [True]
        assert mine[-1]["next_offset"] == story.replica_state(broker.id)["log_end_offset"]
    assert found.evidence == [{"kind": "segment", "tp": "t-0", "broker": s["broker"], "base_offset": s["base_offset"]}
                              for s in found.value]


def test_a_dead_broker_has_no_segments_to_show(story_after_election: Played) -> None:
    dead = [b.id for b in story_after_election.cluster.brokers.values() if not b.alive]
    assert dead
    assert story_after_election.answer({"from": "segments", "where": {"broker": {"in": dead}}, "pick": "count"}) == 0


def checkpoint_files(played: Played) -> list[dict]:
    """Every offset checkpoint file on every broker's disk, parsed from its text (version, count,
    'topic partition offset' lines)."""
    out = []
    for broker in played.cluster.brokers.values():
        for name in sorted(os.listdir(broker.data_dir)):
            if not name.endswith("-checkpoint"):
                continue
            lines = open(os.path.join(broker.data_dir, name), encoding="utf-8").read().splitlines()
            assert lines[0] == "0" and int(lines[1]) == len(lines) - 2
            for line in lines[2:]:
                topic, partition, offset = line.rsplit(" ", 2)
                out.append({"broker": broker.id, "file": name, "tp": f"{topic}-{partition}", "offset": int(offset)})
    return out


@pytest.mark.parametrize("moment", ["story", "story_after_election"])
def test_checkpoints_are_read_from_the_files_on_each_brokers_disk(moment: str, request) -> None:
    played: Played = request.getfixturevalue(moment)
    on_disk = checkpoint_files(played)
    assert on_disk
    found = evaluate(played, {"from": "checkpoints"})
    assert sorted((c["broker"], c["file"], c["tp"], c["offset"]) for c in found.value) == \
        sorted((c["broker"], c["file"], c["tp"], c["offset"]) for c in on_disk)
    assert sorted(tuple(sorted(e.items())) for e in found.evidence) == sorted(
        tuple(sorted({"kind": "checkpoint", "broker": c["broker"], "file": c["file"], "tp": c["tp"]}.items()))
        for c in on_disk)


def test_a_dead_brokers_checkpoint_file_is_still_read(story_after_election: Played) -> None:
    dead = next(b.id for b in story_after_election.cluster.brokers.values() if not b.alive)
    on_disk = [c for c in checkpoint_files(story_after_election) if c["broker"] == dead]
    assert on_disk
    found = story_after_election.answer({"from": "checkpoints", "where": {"broker": dead}, "field": "offset"})
    assert found == [c["offset"] for c in on_disk]


def test_a_checkpoint_is_what_the_file_says_not_the_live_high_watermark(story: Played) -> None:
    checkpoint = story.answer({"from": "checkpoints", "where": {"broker": 1, "file": "replication-offset-checkpoint",
                                                                "tp": "t-0"}, "pick": "one", "field": "offset"})
    (on_disk,) = [c["offset"] for c in checkpoint_files(story)
                  if (c["broker"], c["file"], c["tp"]) == (1, "replication-offset-checkpoint", "t-0")]
    assert checkpoint == on_disk
    assert story.replica_state(1)["high_watermark"] != on_disk, "A restarted less than 5 s ago"


def test_a_stable_groups_members_name_the_leader_that_computed_the_assignment(tmp_path) -> None:
    from engine.scenarios.runner import load_scenario, run_scenario
    from lessons import queries

    cluster, result = run_scenario(load_scenario("group-member-joins"), str(tmp_path / "joins"))
    world = queries.World(cluster, [], [])
    members = queries.evaluate({"from": "members", "where": {"group": "g"}}, world).value
    assert {m["member"] for m in members} == {"c1", "c2"}
    assert {m["state"] for m in members} == {"Stable"}
    assert {m["group_leader"] for m in members} == {"c1"}   # the first to join leads (generation 1 and on)


def test_a_lookup_item_is_the_path_the_log_takes_to_that_offset(tmp_path) -> None:
    from engine.scenarios.runner import load_scenario, run_scenario
    from lessons import queries

    cluster, _ = run_scenario(load_scenario("segments-and-lookup"), str(tmp_path / "segments"))
    world = queries.World(cluster, [], [])
    log = cluster.brokers[1].partitions[("t", 0)].log
    for offset in range(log.log_start_offset, log.log_end_offset):
        found = log.locate(offset)
        item = queries.evaluate({"from": "lookups", "where": {"tp": "t-0", "offset": offset}, "pick": "one"}, world)
        assert item.value["segment"] == found.segment_base_offset
        assert item.value["batches_scanned"] == len(found.scan) >= 1
        assert item.value["position"] == found.position
        assert item.value["index_slot"] == found.index.slot
        assert item.evidence == [{"kind": "lookup", "tp": "t-0", "broker": 1, "offset": offset,
                                  "base_offset": found.segment_base_offset}]
    # The sparse index: some offsets are found from an index entry, others from the segment's start.
    slots = {queries.evaluate({"from": "lookups", "where": {"offset": o}, "pick": "one", "field": "index_slot"},
                              world).value for o in range(log.log_start_offset, log.log_end_offset)}
    assert -1 in slots and 0 in slots
