"""The model's two explaining sections: `timers` (what the cluster waits for) and `truncations`
(what each truncation removed, and whether it was lost or fetched back) — checked against the
engine's own state and against the scenario runner's end state."""
from __future__ import annotations

from pathlib import Path

import pytest

from engine.scenarios.runner import load_scenario, run_scenario
from engine.timers import pending_timers
from lab.host import SessionHost, Shape


def host_at(tmp_path: Path, shape: Shape = Shape(3, 1, "leader-epoch", {})) -> SessionHost:
    return SessionHost(str(tmp_path / "host"), shape)


def play(host: SessionHost, scenario: str) -> None:
    host.load_scenario(load_scenario(scenario))
    while not host.clock()["scenario"]["done"]:
        host.step()


def test_the_timers_section_is_the_engines_and_patches_follow_it(tmp_path: Path) -> None:
    host = host_at(tmp_path)
    host.apply("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})
    assert host.model()["timers"] == []
    crashed_at = host.now_ms
    result = host.apply("kill_broker", {"leader_of": "t-0"})
    timers = result.patch["timers"]
    assert timers == pending_timers(host.cluster)
    expiry = next(t for t in timers if t["kind"] == "session_expiry")
    assert expiry["due_ms"] == crashed_at + 18_000 and expiry["setting"] == "zookeeper.session.timeout.ms"
    assert host.step().patch is None or "timers" not in (host.step().patch or {})   # unchanged: not sent again
    host.step_until("leader_elected")
    assert host.model()["timers"] == []


def fates(model: dict) -> list[tuple[int, str, int, str, str]]:
    return [(t["broker"], r["value"], r["offset"], r["fate"], (r.get("now") or {}).get("value"))
            for t in model["truncations"] for r in t["removed"]]


@pytest.mark.parametrize("scenario", ["hw-truncation-story", "kip101-data-loss", "kip101-data-loss-fixed",
                                      "kip101-divergence", "kip101-divergence-fixed"])
def test_a_removed_record_is_lost_only_if_its_replica_no_longer_holds_it(tmp_path: Path, scenario: str) -> None:
    """Every value in these scenarios is produced once, so the runner's end state tells the truth:
    a removed record was fetched back iff its broker's log ends with that value at that offset."""
    host = host_at(tmp_path)
    play(host, scenario)
    events = []
    _, result = run_scenario(load_scenario(scenario), str(tmp_path / "runner"), trace=events.append)
    truncated = [e for e in events if e.kind == "log_truncated" and e.removed]
    model = host.model()
    assert [(t["broker"], t["from_offset"], t["to_offset"]) for t in model["truncations"]] == \
        [(e.broker, e.from_offset, e.to_offset) for e in truncated]
    (partition,) = result["partitions"]
    for broker, value, offset, fate, now in fates(model):
        held = {r["offset"]: r["value"] for r in partition["replica_states"][str(broker)]["records"]}
        assert fate == ("refetched" if held.get(offset) == value else "lost"), (broker, value, offset)
        if fate == "lost":
            assert now == held.get(offset)


def test_the_hw_story_loses_m6_and_fetches_m5_back(tmp_path: Path) -> None:
    host = host_at(tmp_path)
    play(host, "hw-truncation-story")
    (story,) = host.model()["truncations"]
    assert (story["broker"], story["lost"], story["refetched"]) == (1, 1, 1)
    assert fates(host.model()) == [(1, "m5", 4, "refetched", None), (1, "m6", 5, "lost", "m6'")]


def test_fates_follow_the_line_of_time_through_rewinds(tmp_path: Path) -> None:
    """kip101-data-loss: when A truncates m2 away, B (the leader) still has it — kept; once B dies
    and A leads, m2 is lost. A rewind shows each moment's truth, and forward again the end's."""
    host = host_at(tmp_path)
    play(host, "kip101-data-loss")
    end, end_step = host.model()["truncations"], host.steps
    first = end[0]
    assert [r["fate"] for r in first["removed"]] == ["lost"]
    host.rewind(first["step"], after_seq=first["seq"])     # just after it: B has not died yet
    (kept,) = host.model()["truncations"]
    assert kept["seq"] == first["seq"] and [r["fate"] for r in kept["removed"]] == ["kept"]
    host.rewind(first["step"] - 1)
    assert host.model()["truncations"] == []
    host.rewind(end_step)
    assert host.model()["truncations"] == end


def test_the_same_value_written_again_by_a_new_leader_is_still_a_loss(tmp_path: Path) -> None:
    """A learner's repeated "m": the returning broker's "m" at offset 2 (leader epoch 0) is not
    the "m" the new leader wrote there (epoch 1), even though key and value match."""
    host = host_at(tmp_path)
    step = host.apply
    step("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3, "replica_assignment": [[1, 2, 3]]})
    step("produce", {"topic": "t", "values": ["m", "m"], "acks": "all"})
    host.step_until("high_watermark_advanced")
    for _ in range(200):
        host.step()
    step("pause_fetcher", {"broker": 2})
    step("pause_fetcher", {"broker": 3})
    step("produce", {"topic": "t", "value": "m", "acks": 1})
    host.step_until("records_appended")
    step("kill_broker", {"broker": 1})
    host.step_until("leader_elected")
    step("resume_fetcher", {"broker": 2})
    step("resume_fetcher", {"broker": 3})
    step("produce", {"topic": "t", "value": "m", "acks": "all"})
    host.step_until("produce_acknowledged")
    step("restart_broker", {"broker": 1})
    host.step_until("log_truncated")
    for _ in range(300):
        host.step()
    (cut,) = host.model()["truncations"]
    assert cut["broker"] == 1 and cut["to_offset"] == 2
    ((offset, fate, now),) = [(r["offset"], r["fate"], r.get("now")) for r in cut["removed"]]
    replica = host.cluster.brokers[1].partitions[("t", 0)]
    assert replica.log_end_offset == 3 and replica.epoch_cache.epoch_for_offset(2) == 1
    assert (offset, fate, now) == (2, "lost", {"key": None, "value": "m"})
