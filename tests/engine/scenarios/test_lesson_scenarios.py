"""The built-in scenarios the lessons play (issue 12), each with the facts its lesson asks about.

A lesson plays its scenario in beats (ranges of step indexes) and asks, before each beat, what
the learner will see at its end. So these tests play a scenario step by step with the runner's
own `run_step`, keep the events of each step, and check each fact at the step where it becomes
observable; `test_playing_step_by_step_gives_the_runners_events` ties that play to `run_scenario`.
Times are virtual (the events' `time_ms`).
"""
from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from engine import events as ev
from engine.clients.partitioner import partition_for_key
from engine.cluster import Cluster
from engine.inspect.cluster import cluster_state
from engine.inspect.groups import consumed, describe_groups
from engine.scenarios import load_scenario, run_scenario
from engine.scenarios.runner import STEP_META_KEYS, run_step
from engine.scenarios.schema import check_step

LESSON_SCENARIOS = [
    "topics-and-partitions", "hw-normal-progress", "controller-failover", "assignors-compared", "keyed-ordering",
    "acks0-blind", "linger-compared", "election-order", "unclean-election-refused", "consumer-fetch",
    "segments-and-lookup", "retention-by-time", "retention-trickle", "two-groups",
]


@dataclass
class Played:
    """A scenario played step by step: the cluster's start-up events, each step's events, and what
    `look` saw after chosen steps."""
    cluster: Cluster
    setup: list[ev.Event]
    steps: list[list[ev.Event]] = field(default_factory=list)
    seen: dict[int, Any] = field(default_factory=dict)

    def events(self, kind: str, *, step: int | None = None, **match: Any) -> list[ev.Event]:
        pool = self.steps[step] if step is not None else [e for s in self.steps for e in s]
        return [e for e in pool if e.kind == kind and all(getattr(e, k) == v for k, v in match.items())]

    def step_of(self, event: ev.Event) -> int:
        return next(i for i, s in enumerate(self.steps) if any(e is event for e in s))

    def messages(self, api: str, *, src: str | None = None, dst: str | None = None,
                 step: int | None = None) -> list[ev.Event]:
        return [e for e in self.events("message_sent", step=step)
                if e.api == api and (src is None or e.src == src) and (dst is None or e.dst == dst)]


def play(name: str, tmp_path: Path, look: dict[int, Callable[[Cluster], Any]] | None = None) -> Played:
    """Play built-in scenario `name` as the runner does (same cluster shape, same step function),
    one step at a time; `look[i](cluster)` runs right after step i."""
    scenario = load_scenario(name)
    shape = scenario.get("cluster", {})
    events: list[ev.Event] = []
    cluster = Cluster(brokers=int(shape.get("brokers", 3)), data_dir=str(tmp_path / name),
                      seed=int(shape.get("seed", 0)), config=shape.get("config") or {},
                      truncation=shape.get("truncation"), on_event=events.append)
    played = Played(cluster, list(events))
    for index, step in enumerate(scenario["steps"]):
        (command, args), = ((k, v) for k, v in step.items() if k not in STEP_META_KEYS)
        mark = len(events)
        run_step(cluster, command, check_step(command, args), index)
        played.steps.append(events[mark:])
        if look and index in look:
            played.seen[index] = look[index](cluster)
    return played


@pytest.fixture
def closing():
    opened: list[Cluster] = []
    yield opened
    for cluster in opened:
        cluster.close()


@pytest.fixture
def run(tmp_path, closing):
    def _run(name: str, look: dict[int, Callable[[Cluster], Any]] | None = None) -> Played:
        played = play(name, tmp_path, look)
        closing.append(played.cluster)
        return played
    return _run


def replica(cluster: Cluster, broker: int, topic: str = "t", partition: int = 0):
    return cluster.brokers[broker].partitions[(topic, partition)]


def values(cluster: Cluster, broker: int, topic: str = "t", partition: int = 0) -> list[str]:
    log = replica(cluster, broker, topic, partition).log
    return [r.value.decode() for r in log.records_from(log.log_start_offset)]


def leo_hw(cluster: Cluster, broker: int, topic: str = "t", partition: int = 0) -> tuple[int, int]:
    part = replica(cluster, broker, topic, partition)
    return part.log_end_offset, part.high_watermark


def client_of(member_id: str) -> str:
    """A member id is client.id + "-" + a UUID (36 characters)."""
    return member_id[:-37]


# -- every lesson scenario --------------------------------------------------------------------------
@pytest.mark.parametrize("name", LESSON_SCENARIOS)
def test_playing_step_by_step_gives_the_runners_events(tmp_path, closing, name):
    runner_events: list[ev.Event] = []
    cluster, result = run_scenario(load_scenario(name), str(tmp_path / "runner"), trace=runner_events.append)
    closing.append(cluster)
    played = play(name, tmp_path / "stepwise")
    closing.append(played.cluster)
    stepwise = played.setup + [e for s in played.steps for e in s]
    assert [e.to_dict() for e in stepwise] == [e.to_dict() for e in runner_events]
    assert result["step_errors"] == [] and result["step_warnings"] == []


@pytest.mark.parametrize("name", LESSON_SCENARIOS)
def test_a_lesson_scenario_is_short_seeded_and_described(name):
    scenario = load_scenario(name)
    assert scenario["name"] == name
    assert isinstance(scenario["cluster"].get("seed"), int)
    assert 3 <= len(scenario["steps"]) <= 30
    summary, _, rest = scenario["description"].partition("\n")
    assert summary.endswith(".") and rest
    assert any(step.get("note") for step in scenario["steps"])


# -- L1 topics-and-partitions -----------------------------------------------------------------------
def test_five_partitions_on_three_brokers_are_led_two_two_one_with_ten_replica_directories(run, tmp_path):
    played = run("topics-and-partitions")
    elected = played.events("leader_elected", step=0, topic="t")
    assert sorted(e.partition for e in elected) == [0, 1, 2, 3, 4]
    led = [sum(1 for e in elected if e.leader == broker) for broker in (1, 2, 3)]
    assert sorted(led) == [1, 2, 2]
    assert {e.partition: e.leader for e in elected} == {0: 2, 1: 3, 2: 1, 3: 2, 4: 3}
    created = played.events("topic_created", step=0, topic="t")[0]
    assert all(len(set(replicas)) == 2 for replicas in created.assignment)
    data = tmp_path / "topics-and-partitions"
    directories = sorted(d for b in os.listdir(data) if b.startswith("broker-")
                         for d in os.listdir(data / b) if d.startswith("t-"))
    assert len(directories) == 10 and all(directories.count(f"t-{p}") == 2 for p in range(5))


def test_each_customer_s_records_land_on_the_partition_of_its_key(run):
    played = run("topics-and-partitions")
    c = played.cluster
    expected = {"olivia": 0, "trent": 1, "carol": 2, "bob": 3, "alice": 4}
    for key, partition in expected.items():
        assert partition_for_key(key.encode(), 5) == partition
        for broker in c.partition_state("t", partition)["replicas"]:
            assert values(c, broker, "t", partition) == [f"{key}-1", f"{key}-2"]


def test_a_lone_group_member_owns_all_five_partitions_and_fetches_from_three_leaders(run):
    played = run("topics-and-partitions")
    received = played.events("assignment_received", step=7, consumer="c1")
    assert received[0].generation == 1 and received[0].assignment == [f"t-{p}" for p in range(5)]
    assert len(consumed(played.cluster)["c1"]) == 10
    fetched_from = {e.dst for e in played.messages("Fetch", src="consumer-c1", step=8)}
    assert fetched_from == {"broker-1", "broker-2", "broker-3"}


# -- L4 hw-normal-progress --------------------------------------------------------------------------
def test_the_leader_s_hw_climbs_four_five_six_one_step_per_fetch_of_the_slowest_follower(run):
    look = {i: (lambda c: {b: leo_hw(c, b) for b in (1, 2, 3)}) for i in (2, 6, 7, 8, 9, 10)}
    played = run("hw-normal-progress", look)
    seen = played.seen
    assert seen[2] == {1: (3, 3), 2: (3, 3), 3: (3, 3)}                 # A holds m1-m3: LEO 3, HW 3
    assert seen[6][1] == (6, 3) and seen[6][2][0] == seen[6][3][0] == 3  # m4-m6 on A only
    # the leader's HW moves once per beat: 4, then 5, then 6
    for step, new in ((7, 4), (8, 5), (9, 6)):
        moves = played.events("high_watermark_advanced", step=step, broker=1)
        assert [e.new for e in moves] == [new]
        # ... at the moment C's fetch carrying fetch offset `new` (its new LEO) reaches A
        fetch = next(m for m in played.messages("Fetch", src="broker-3", dst="broker-1")
                     if m.summary["partitions"][0]["fetch_offset"] == new)
        assert fetch.arrive_ms == moves[0].time_ms
    assert seen[7][2][0] == 5 and seen[7][3][0] == 4                     # B has m4-m5, C m4
    assert seen[8][2][0] == 6 and seen[8][3][0] == 5                     # B has m6, C m5
    assert seen[9][3][0] == 6                                            # C has m6
    assert seen[8][2][1] == 4                                            # when A's HW is 5, B's is still 4
    assert seen[10] == {1: (6, 6), 2: (6, 6), 3: (6, 6)}


def test_every_follower_fetch_copies_one_record(run):
    played = run("hw-normal-progress")
    copies = [e for s in played.steps[6:10] for e in s if e.kind == "records_appended" and e.role == "follower"]
    assert [(e.broker, e.records_count) for e in copies] == [(2, 1), (3, 1), (2, 1), (2, 1), (3, 1), (3, 1)]


# -- L5 controller-failover -------------------------------------------------------------------------
def test_the_controller_s_death_moves_the_controller_after_the_session_timeout_not_the_leaders(run):
    played = run("controller-failover", {6: lambda c: [c.partition_state("t", p) for p in (0, 1)]})
    assert [e.broker for e in played.setup if e.kind == "controller_elected"] == [1]
    leaders = {e.partition: e.leader for e in played.events("leader_elected", step=0, topic="t")}
    assert leaders == {0: 2, 1: 3}
    crashed = played.events("broker_crashed", step=4)[0]
    elected = played.events("controller_elected", step=5)[0]
    assert crashed.broker == 1 and elected.broker == 2 and elected.controller_epoch == 2
    assert 18000 <= elected.time_ms - crashed.time_ms <= 18010          # zookeeper.session.timeout.ms
    shrunk = {e.partition: e for e in played.events("isr_shrunk", step=5)}
    assert shrunk[0].isr == [2, 3] and shrunk[1].isr == [3, 2]
    assert all(e.removed == [1] and e.reason == "broker failed (controller)" for e in shrunk.values())
    assert not played.events("leader_elected", topic="t", step=5) and not played.events("leader_elected", step=6)
    applied = played.events("leader_and_isr_applied", step=6, topic="t")
    assert {(e.partition, e.leader, e.leader_epoch) for e in applied} == {(0, 2, 1), (1, 3, 1)}


def test_the_partition_state_the_controller_writes_holds_no_high_watermark(run):
    played = run("controller-failover", {6: lambda c: [c.partition_state("t", p) for p in (0, 1)]})
    for state in played.seen[6]:
        assert set(state) == {"leader", "leader_epoch", "isr", "replicas", "controller_epoch"}
    assert [s["leader_epoch"] for s in played.seen[6]] == [1, 1]


def test_writes_go_on_and_the_old_controller_returns_as_a_follower(run):
    played = run("controller-failover")
    acked = played.events("produce_acknowledged", step=9)
    assert sorted((e.partition, e.offset) for e in acked) == [(0, 2), (1, 2)]
    c = played.cluster
    assert c.controller_id() == 2
    assert sorted(c.partition_state("t", 0)["isr"]) == sorted(c.partition_state("t", 1)["isr"]) == [1, 2, 3]
    assert values(c, 1, "t", 0) == ["m1", "m2", "m5"] and values(c, 1, "t", 1) == ["m3", "m4", "m6"]


# -- L6 assignors-compared --------------------------------------------------------------------------
def test_range_gives_the_first_member_four_partitions_and_roundrobin_three(run):
    played = run("assignors-compared")
    ranged = played.events("rebalance_completed", step=3, group="range-group")[0]
    dealt = played.events("rebalance_completed", step=5, group="roundrobin-group")[0]
    assert ranged.generation == dealt.generation == 1
    assert ranged.protocol == "range" and dealt.protocol == "roundrobin"
    assert {client_of(m): a for m, a in ranged.assignment.items()} == {
        "range-c0": ["t0-0", "t0-1", "t1-0", "t1-1"], "range-c1": ["t0-2", "t1-2"]}
    assert {client_of(m): a for m, a in dealt.assignment.items()} == {
        "roundrobin-c0": ["t0-0", "t0-2", "t1-1"], "roundrobin-c1": ["t0-1", "t1-0", "t1-2"]}
    # a member (the group leader), not the coordinator, computed each assignment
    assert ranged.leader in ranged.assignment and dealt.leader in dealt.assignment


# -- L9 keyed-ordering ------------------------------------------------------------------------------
def test_each_customer_keeps_its_order_but_the_overall_order_is_lost(run):
    played = run("keyed-ordering")
    c = played.cluster
    assert {p: values(c, p + 1, "orders", p) for p in range(3)} == {
        0: ["alice-1", "alice-2", "alice-3"], 1: ["dave-1", "dave-2", "dave-3"], 2: ["carol-1", "carol-2", "carol-3"]}
    got = [r["value"] for e in played.events("records_consumed", step=12) for r in e.records]
    produced_order = [f"{k}-{i}" for i in (1, 2, 3) for k in ("alice", "dave", "carol")]
    assert sorted(got) == sorted(produced_order)
    for customer in ("alice", "dave", "carol"):
        assert [v for v in got if v.startswith(customer)] == [f"{customer}-{i}" for i in (1, 2, 3)]
    assert got != produced_order


# -- L10 acks0-blind --------------------------------------------------------------------------------
def test_an_acks0_producer_learns_no_offset_and_never_hears_of_a_lost_record(run):
    played = run("acks0-blind")
    created = played.events("producer_created", step=1)[0]
    assert created.config["acks"] == "0" and created.config["enable.idempotence"] is False
    first = played.events("producer_batch_acknowledged", step=1)[0]
    assert first.base_offset == -1                                     # written at 0; the producer learns -1
    assert [r["offset"] for e in played.events("records_appended", step=2, broker=1) for r in e.records] == [0]
    dropped = played.events("message_dropped", step=4)
    assert [(e.api, e.reason) for e in dropped] == [("Produce", "link cut")]
    assert played.events("producer_batch_acknowledged", step=4)[0].base_offset == -1
    assert not played.events("producer_batch_retried") and not played.events("producer_batch_failed")
    assert not played.events("records_appended", step=5)
    c = played.cluster
    for broker in (1, 2, 3):
        assert values(c, broker) == ["m1", "m3"]
    m2 = next(r for r in cluster_state(c)["produced"] if r["value"] == "m2")
    assert m2["acked"] is True and m2["offset"] == -1 and m2["error"] is None


# -- L12 linger-compared ----------------------------------------------------------------------------
def test_linger_5_sends_the_same_records_in_three_batches_and_two_requests_linger_0_in_nine_and_six(run):
    played = run("linger-compared")
    comparison = range(4, 25)

    def sent(producer: str) -> tuple[list[ev.Event], list[ev.Event]]:
        batches = [e for i in comparison for e in played.events("producer_batch_sent", step=i, producer=producer)]
        requests = [m for i in comparison for m in played.messages("Produce", src=producer, step=i)]
        return batches, requests

    batches0, requests0 = sent("producer-linger-0")
    batches5, requests5 = sent("producer-linger-5")
    assert [b.records_count for b in batches0] == [1] * 9 and len(requests0) == 6
    assert [b.records_count for b in batches5] == [3, 3, 3] and len(requests5) == 2
    # one drain, three partitions, two leader brokers: two requests, broker 1's carrying two batches
    assert all(played.step_of(b) == 24 for b in batches5)
    assert sorted((m.dst, len(m.summary["partitions"])) for m in requests5) == [("broker-1", 2), ("broker-2", 1)]
    c = played.cluster
    for p in range(3):
        assert values(c, c.leader_of("linger-0", p), "linger-0", p) == values(c, c.leader_of("linger-5", p), "linger-5", p)


# -- L15 election-order and unclean-election-refused ------------------------------------------------
def test_the_controller_elects_by_replica_order_not_by_isr_join_order(run):
    played = run("election-order")
    shrunk = played.events("isr_shrunk", step=5)[0]
    expanded = played.events("isr_expanded", step=7)[0]
    assert shrunk.removed == [3] and shrunk.isr == [1, 2]
    assert expanded.added == [3] and expanded.isr == [1, 3, 2]        # the lab lists an ISR in replica order
    elected = played.events("leader_elected", step=10)[0]
    assert (elected.leader, elected.leader_epoch, elected.isr, elected.previous_leader) == (3, 1, [3, 2], 1)
    assert not elected.unclean and elected.reason == "leader failed"
    assert played.events("produce_acknowledged", step=12)[0].offset == 2
    assert values(played.cluster, 3) == values(played.cluster, 2) == ["m1", "m2", "m3"]


def test_with_unclean_election_off_the_partition_stays_offline_and_loses_nothing(run):
    played = run("unclean-election-refused", {12: lambda c: c.partition_state("t", 0)["leader"]})
    acked = played.events("produce_acknowledged")
    assert [e.offset for e in acked] == [0, 1, 2] and all(played.step_of(e) in (2, 6) for e in acked)
    offline = played.events("partition_offline", step=10)[0]
    assert offline.reason == "no live replica in the ISR (unclean.leader.election.enable=false)"
    refused = played.events("produce_failed", step=11)[0]
    assert refused.error == "LEADER_NOT_AVAILABLE"
    assert not any(played.events("leader_elected", step=i) for i in range(7, 14)) and played.seen[12] == -1
    back = played.events("leader_elected", step=14)[0]
    assert (back.leader, back.leader_epoch, back.reason, back.unclean) == (2, 2, "partition back online", False)
    assert played.events("isr_expanded", step=15)[0].isr == [2, 3]
    assert values(played.cluster, 2) == values(played.cluster, 3) == ["m1", "m2", "m3"]


# -- L16 consumer-fetch -----------------------------------------------------------------------------
def test_one_fetch_round_is_one_fetch_per_leader_broker(run):
    played = run("consumer-fetch")
    fetches = played.messages("Fetch", src="consumer-c1", step=6)
    first_round = [m for m in fetches if m.send_ms == fetches[0].send_ms]
    assert sorted((m.dst, tuple(p["partition"] for p in m.summary["partitions"])) for m in first_round) == [
        ("broker-1", (0, 1)), ("broker-2", (2,))]


def test_a_broker_only_answers_the_consumer_s_fetches(run):
    played = run("consumer-fetch")
    for broker in ("broker-1", "broker-2", "broker-3"):
        exchange = [m for m in played.events("message_sent") if m.api in ("Fetch", "FetchResponse")
                    and {m.src, m.dst} == {"consumer-c1", broker}]
        # at most one Fetch in flight per broker, and every FetchResponse follows a Fetch
        in_flight = 0
        for m in exchange:
            in_flight += 1 if m.api == "Fetch" else -1
            assert in_flight in (0, 1)
    got_c2 = played.events("records_consumed", step=9)[0]
    assert [(r["partition"], r["offset"], r["value"]) for r in got_c2.records] == [(2, 1, "c2")]


def test_after_the_leader_dies_the_consumer_asks_for_metadata_then_fetches_from_the_new_leader(run):
    played = run("consumer-fetch")
    elected = played.events("leader_elected", step=11, topic="t", partition=2)[0]
    assert elected.leader == 3 and elected.previous_leader == 2
    after = [m for m in played.events("message_sent", step=13) if m.src == "consumer-c1"]
    first_to_3 = next(i for i, m in enumerate(after) if m.api == "Fetch" and m.dst == "broker-3")
    assert any(m.api == "Metadata" for m in after[:first_to_3])
    assert after[first_to_3].summary["partitions"] == [{"topic": "t", "partition": 2, "fetch_offset": 2}]
    t2 = [(r["offset"], r["value"]) for r in consumed(played.cluster)["c1"] if r["partition"] == 2]
    assert t2 == [(0, "c1"), (1, "c2"), (2, "c3")]                      # nothing skipped, nothing twice


# -- L17 segments-and-lookup ------------------------------------------------------------------------
def test_segments_are_named_by_base_offset_and_the_active_one_is_smaller(run, tmp_path):
    played = run("segments-and-lookup", {2: lambda c: [(s.base_offset, s.size) for s in replica(c, 1).log.segments]})
    assert played.seen[2] == [(0, 288)]
    rolled = played.events("segment_rolled", step=4)[0]
    assert (rolled.base_offset, rolled.previous_base_offset) == (4, 0)
    directory = tmp_path / "segments-and-lookup" / "broker-1" / "t-0"
    logs = sorted(f for f in os.listdir(directory) if f.endswith(".log"))
    assert logs[1] == "00000000000000000004.log" and len(logs) == 7
    sizes = {f: os.path.getsize(directory / f) for f in logs}
    assert sizes.pop("00000000000000000024.log") == 72 and set(sizes.values()) == {288}
    full = [s for s in replica(played.cluster, 1).log.segments][:-1]
    assert [os.path.getsize(directory / f"{s.base_offset:020d}.index") for s in full] == [8] * 6


def test_an_offset_lookup_goes_segment_then_index_entry_then_a_short_scan(run):
    played = run("segments-and-lookup")
    log = replica(played.cluster, 1).log
    ten = log.locate(10)
    assert ten.segment_base_offset == 8 and (ten.index.offset, ten.index.position) == (10, 144)
    assert [s.base_offset for s in ten.scan] == [10] and ten.record.value == b"m11"
    nine = log.locate(9)
    assert nine.segment_base_offset == 8 and nine.index.position == 0
    assert [s.base_offset for s in nine.scan] == [8, 9] and nine.record.value == b"m10"


# -- L18 retention-by-time and retention-trickle ---------------------------------------------------
def test_segment_zero_goes_at_70_s_and_the_active_segment_at_100_s(run):
    played = run("retention-by-time")
    assert [e.base_offset for e in played.events("segment_rolled", step=2)] == [4]
    late = played.events("records_appended", step=5)
    assert [r["offset"] for e in late for r in e.records] == [6, 7] and late[0].time_ms >= 30000
    first = played.events("segment_deleted", step=6)[0]
    assert (first.base_offset, first.time_ms, first.reason) == (0, 70000, "retention.ms")
    assert played.events("log_start_offset_moved", step=6)[0].log_start_offset == 4
    rolled = played.events("segment_rolled", step=7)[0]
    second = played.events("segment_deleted", step=7)[0]
    assert rolled.base_offset == 8 and (second.base_offset, second.time_ms) == (4, 100000)
    assert played.events("log_start_offset_moved", step=7)[0].log_start_offset == 8
    log = replica(played.cluster, 1).log
    assert (log.log_start_offset, log.log_end_offset) == (8, 8) and values(played.cluster, 1) == []
    assert not played.events("records_consumed") and not played.cluster.consumers   # nobody ever read t


def test_a_trickle_keeps_its_oldest_record_past_retention(run):
    played = run("retention-trickle", {18: lambda c: (c.now_ms, replica(c, 1).log.log_start_offset,
                                                       len(replica(c, 1).log.segments))})
    now, log_start, segments = played.seen[18]
    assert now >= 180000 and log_start == 0 and segments == 1
    assert not played.events("segment_deleted") and not played.events("segment_rolled")
    read = [(r["offset"], r["value"]) for r in consumed(played.cluster)["c1"]]
    assert read == [(i, f"r{i}") for i in range(9)]


# -- L8 / L6 two-groups -----------------------------------------------------------------------------
def test_two_groups_each_read_every_record_and_the_log_keeps_them(run):
    played = run("two-groups")
    c = played.cluster
    groups = {g["group"]: g for g in describe_groups(c)}
    everything = ["alice-1", "alice-2", "carol-1", "carol-2", "dave-1", "dave-2"]
    for group, member in (("billing", "billing-1"), ("audit", "audit-1")):
        assert [m["assignment"] for m in groups[group]["members"]] == [["t-0", "t-1", "t-2"]]
        assert sorted(r["value"] for r in consumed(c)[member]) == everything
        assert groups[group]["committed"] == {"t-0": 2, "t-1": 2, "t-2": 2}
    for p in range(3):
        for broker in c.partition_state("t", p)["replicas"]:
            assert replica(c, broker, "t", p).log.log_start_offset == 0 and len(values(c, broker, "t", p)) == 2


def test_a_step_may_carry_its_note_in_chinese_beside_the_english_and_nothing_else(tmp_path) -> None:
    from engine.scenarios.runner import ScenarioError, run_scenario, step_command, validate

    scenario = {"cluster": {"brokers": 1, "seed": 1}, "steps": [
        {"create_topic": {"topic": "t", "partitions": 1, "replication_factor": 1},
         "note": "a topic", "note_zh": "一个 topic"}]}
    validate(scenario)
    assert step_command(scenario["steps"][0]) == "create_topic"
    cluster, result = run_scenario(scenario, str(tmp_path / "run"))
    assert [p["topic"] for p in result["partitions"]] == ["t"]
    for bad in ({"note_zh": 5}, {"note": "x" * 1001}, {"note_en": "a topic"}):
        broken = {**scenario, "steps": [{**scenario["steps"][0], **bad}]}
        with pytest.raises(ScenarioError):
            validate(broken)
