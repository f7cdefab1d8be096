"""A lab session's host runs commands, moves its clock and travels back in time (no Django here)."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.inspect.cluster import cluster_state
from engine.scenarios.runner import load_scenario
from lab.host import CommandRecord, HostError, Journal, SessionHost, Shape
from lab.limits import Limits

SEED = 7
REPO_ROOT = Path(__file__).resolve().parents[2]


class ListJournal(Journal):
    """Keeps what a host writes, as the database would."""

    def __init__(self) -> None:
        self.records: list[CommandRecord] = []
        self.position = (0, 0)
        self.shapes: list[Shape] = []

    def appended(self, record: CommandRecord, step: int, time_ms: int) -> None:
        self.records.append(record)
        self.position = (step, time_ms)

    def cut(self, from_index: int) -> None:
        del self.records[from_index:]

    def restarted(self, shape: Shape) -> None:
        self.records, self.position = [], (0, 0)
        self.shapes.append(shape)


def make_host(root: Path, *, limits: Limits | None = None, journal: Journal | None = None,
              shape: Shape = Shape(3, SEED, "leader-epoch", {})) -> SessionHost:
    return SessionHost(str(root), shape, limits=limits, journal=journal)


def disk_digest(run_dir: str) -> dict[str, str]:
    """Every file of a run dir and a hash of its bytes."""
    out = {}
    for folder, _, files in os.walk(run_dir):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, run_dir)] = hashlib.sha256(f.read()).hexdigest()
    return out


def play_story(host: SessionHost, midway: Callable[[SessionHost], None] = lambda host: None) -> None:
    """Commands and clock moves of a small story: a topic, records, a crash. `midway` sees the host
    at a step where no command was applied."""
    host.apply("create_topic", {"topic": "t", "partitions": 2, "replication_factor": 3})
    host.apply("produce", {"topic": "t", "key": "k", "values": ["m1", "m2", "m3"], "acks": "all"})
    for _ in range(40):
        host.step()
    midway(host)
    host.step()
    host.apply("kill_broker", {"leader_of": "t-0"})
    host.step_until("leader_elected")
    host.apply("produce", {"topic": "t", "key": "k", "value": "m4", "acks": 1})
    for _ in range(25):
        host.step()


def test_a_command_returns_the_events_it_caused(tmp_path: Path) -> None:
    host = make_host(tmp_path)

    result = host.apply("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})

    kinds = [e.kind for e in result.events]
    assert "topic_created" in kinds and "leader_elected" in kinds
    assert result.step == host.steps and result.time_ms == host.now_ms
    assert [m["command"] for m in host.timeline()["marks"]] == [
        {"create_topic": {"topic": "t", "partitions": 1, "replication_factor": 3}}]


def test_the_clock_moves_produced_records_through_replication(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    host.apply("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})
    host.apply("produce", {"topic": "t", "key": "k", "value": "hello", "acks": "all"})

    seen = []
    while "produce_acknowledged" not in seen:
        seen += [e.kind for e in host.step().events]

    assert "records_appended" in seen and "high_watermark_advanced" in seen
    state = host.snapshot()
    assert state["partitions"][0]["high_watermark"] == 1
    assert state["partitions"][0]["replica_states"]["1"]["records"] == [{"offset": 0, "key": "k", "value": "hello"}]
    assert state["produced_count"] == 1 and state["step"] == host.steps


def test_step_until_stops_at_the_next_event_of_that_kind(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    host.apply("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})

    result = host.step_until("checkpoint_written")

    assert result.events[-1].kind == "checkpoint_written"
    with pytest.raises(HostError, match="Unknown event kind"):
        host.step_until("no_such_event")


@pytest.mark.parametrize(("command", "args", "message", "kafka_error"), [
    ("launch_rocket", {}, "Unknown command 'launch_rocket'", "INVALID_REQUEST"),
    ("run", {"ms": 100}, "moves time: send a clock message", "INVALID_REQUEST"),
    ("produce", ["not", "an", "object"], "must be an object", "INVALID_REQUEST"),
    ("create_topic", {"partitions": 1}, "create_topic.topic is required", "INVALID_REQUEST"),
    ("kill_broker", {"broker": 12}, "kill_broker.broker must be a whole number from 1 to 9, not 12", "INVALID_REQUEST"),
    ("kill_broker", {"broker": 5}, "There is no broker 5", "BROKER_NOT_AVAILABLE"),
    ("create_topic", {"topic": "bad name!", "partitions": 1}, "", "INVALID_TOPIC_EXCEPTION"),
])
def test_a_bad_command_is_a_clear_error_and_loses_nothing(tmp_path: Path, command: str, args: object,
                                                           message: str, kafka_error: str | None) -> None:
    host = make_host(tmp_path)
    host.apply("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})
    before = host.snapshot()

    with pytest.raises(HostError) as raised:
        host.apply(command, args)  # type: ignore[arg-type]

    assert message in raised.value.message
    assert raised.value.kafka_error == kafka_error
    assert host.snapshot() == before
    assert len(host.timeline()["marks"]) == 1


def test_rewind_returns_to_the_exact_state_of_that_step(tmp_path: Path) -> None:
    host = make_host(tmp_path / "a")
    host.apply("create_topic", {"topic": "t", "partitions": 2, "replication_factor": 3})
    host.apply("produce", {"topic": "t", "key": "k", "values": ["m1", "m2"], "acks": "all"})
    for _ in range(30):
        host.step()
    mid_step, mid_state = host.steps, host.snapshot()
    host.step()
    kill = host.apply("kill_broker", {"broker": 2})
    after_kill = host.snapshot()
    host.step_until("isr_shrunk")
    old_run_dir = host.run_dir

    host.rewind(mid_step)

    assert host.snapshot() == mid_state
    assert host.run_dir != old_run_dir and not os.path.exists(old_run_dir)
    left = [name for name in os.listdir(tmp_path / "a") if not name.endswith(".deleted")]   # being deleted
    assert sorted(left) == sorted([os.path.basename(host.run_dir), "checkpoints", "history"])
    host.rewind(host.timeline()["marks"][-1]["step"])  # a mark: the state just after its command
    assert host.snapshot() == after_kill and host.steps == kill.step


def test_rewind_writes_the_same_bytes_as_a_straight_run(tmp_path: Path) -> None:
    straight_run: dict = {}

    def look(host: SessionHost) -> None:
        straight_run.update(step=host.steps, state=host.snapshot(), disk=disk_digest(host.run_dir))
    play_story(make_host(tmp_path / "straight"), midway=look)
    travelled = make_host(tmp_path / "travelled")
    play_story(travelled)

    travelled.rewind(straight_run["step"])

    assert any(name.endswith(".log") for name in straight_run["disk"])
    assert travelled.steps == straight_run["step"]
    assert travelled.snapshot() == straight_run["state"]
    assert disk_digest(travelled.run_dir) == straight_run["disk"]


def test_rewind_keeps_the_future_until_a_new_command_cuts_it(tmp_path: Path) -> None:
    journal = ListJournal()
    host = make_host(tmp_path, journal=journal)
    play_story(host)
    end_step, end_state = host.steps, host.snapshot()
    first_mark = host.timeline()["marks"][0]["step"]

    host.rewind(first_mark)
    assert len(host.timeline()["marks"]) == 4  # the future is still on the timeline
    host.rewind(end_step)                       # ...and forward again replays it
    assert host.snapshot() == end_state

    host.rewind(host.timeline()["marks"][1]["step"])
    with pytest.raises(HostError) as refused:
        host.apply("produce", {"topic": "t", "value": "another future"})
    assert refused.value.kafka_error == "FUTURE_EXISTS" and len(host.timeline()["marks"]) == 4
    host.apply("produce", {"topic": "t", "value": "another future"}, discard_future=True)

    assert [list(m["command"]) for m in host.timeline()["marks"]] == [["create_topic"], ["produce"], ["produce"]]
    assert [r.args.get("value") for r in journal.records] == [None, None, "another future"]


def test_a_rebuilt_host_resumes_where_the_old_one_stood(tmp_path: Path) -> None:
    journal = ListJournal()
    host = make_host(tmp_path / "before", journal=journal)
    play_story(host)
    host.play(speed=2.0)
    host.tick(1234.5)                     # live time leaves the clock between two actions
    state, position, digest = host.snapshot(), host.position(), disk_digest(host.run_dir)
    host.close()

    resumed = SessionHost(str(tmp_path / "after"), host.shape, log=journal.records, position=position)

    assert resumed.snapshot() == state
    assert resumed.position() == position
    assert disk_digest(resumed.run_dir) == digest


def test_live_time_follows_the_wall_clock_times_the_speed(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    start = host.now_ms

    host.tick(1000)
    assert host.now_ms == start  # paused: nothing moves
    host.play(speed=2.5)
    host.tick(1000)
    host.tick(0.2)
    host.tick(0.2)

    assert host.now_ms == start + 2501  # 2500 + 0.5 + 0.5 carried over
    host.pause()
    with pytest.raises(HostError, match="speed must be between"):
        host.play(speed=11)


@pytest.mark.parametrize("call", ["pause", "set_speed", "play"])
def test_pause_play_and_speed_return_the_events_of_the_last_stretch_they_ran(tmp_path: Path, call: str) -> None:
    """They run the clock up to now before changing it: those events are theirs to hand back,
    or no tab would see them until the next call that returns events."""
    now = [0.0]
    host = SessionHost(str(tmp_path), Shape(3, SEED, "leader-epoch", {}), wall_clock=lambda: now[0])
    host.apply("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})
    host.apply("produce", {"topic": "t", "values": ["a", "b"], "acks": "all"})
    host.play(speed=1)
    seq_before = host.cluster.bus.count
    now[0] += 2.0  # two wall seconds pass with no tick

    result = {"pause": lambda: host.pause(), "set_speed": lambda: host.set_speed(2),
              "play": lambda: host.play(speed=3)}[call]()

    assert result.events, "the catch-up's events came back"
    assert [e.seq for e in result.events] == list(range(seq_before, host.cluster.bus.count))
    assert host.now_ms >= 2000


def test_load_scenario_plays_a_built_in_scenario_as_the_runner_does(tmp_path: Path) -> None:
    completed = subprocess.run([sys.executable, "-m", "engine.scenarios", "run", "hw-truncation-story", "--json"],
                               cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    expected = json.loads(completed.stdout)
    host = make_host(tmp_path)

    host.load_scenario(load_scenario("hw-truncation-story"))
    scenario = host.clock()["scenario"]
    assert (scenario["name"], scenario["steps"], scenario["next_step"], scenario["done"]) == \
        ("hw-truncation-story", 18, 0, False)
    while not host.clock()["scenario"]["done"]:
        host.step()

    state = cluster_state(host.cluster)
    for key in ("events", "name", "step_errors", "step_warnings"):
        state.pop(key, None), expected.pop(key, None)
    assert state == expected
    assert host.take_notices() == []
    assert host.shape == Shape(3, 1, "high-watermark", {})


def test_a_live_scenario_ends_where_a_paused_one_does(tmp_path: Path) -> None:
    scenario = load_scenario("hw-truncation-story")
    paused = make_host(tmp_path / "paused")
    paused.load_scenario(scenario)
    while not paused.clock()["scenario"]["done"]:
        paused.step()

    live = make_host(tmp_path / "live")
    live.load_scenario(scenario)
    live.play(speed=10)
    while live.clock()["mode"] == "live":
        live.tick(250)

    assert live.snapshot() == paused.snapshot()
    clock = live.clock()
    assert (clock["mode"], clock["speed"], clock["scenario"]["done"], clock["running"]) == ("paused", 10.0, True, [])


def test_a_failing_scenario_step_stops_the_scenario_with_a_notice(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    host.load_scenario({"name": "oops", "cluster": {"brokers": 1},
                        "steps": [{"kill_broker": {"broker": 5}},
                                  {"create_topic": {"topic": "never"}}]})

    host.step()

    notices = host.take_notices()
    assert len(notices) == 1 and "There is no broker 5" in notices[0]["message"]
    assert host.clock()["scenario"]["done"] and host.snapshot()["topics"] == []


def test_an_invalid_scenario_is_refused(tmp_path: Path) -> None:
    host = make_host(tmp_path)

    with pytest.raises(HostError, match="unknown command 'fly'"):
        host.load_scenario({"steps": [{"fly": {}}]})
    with pytest.raises(HostError, match="cluster.brokers must be a whole number from 1 to 9, not 12"):
        host.load_scenario({"cluster": {"brokers": 12}, "steps": []})


def test_reset_starts_a_fresh_cluster_and_tells_the_journal(tmp_path: Path) -> None:
    journal = ListJournal()
    host = make_host(tmp_path, journal=journal)
    play_story(host)

    host.reset(Shape(5, 99, "high-watermark", {"min.insync.replicas": 2}))

    assert [b["id"] for b in host.snapshot()["brokers"]] == [1, 2, 3, 4, 5]
    assert host.timeline()["marks"] == [] and journal.records == []
    assert journal.shapes == [Shape(5, 99, "high-watermark", {"min.insync.replicas": 2})]
    with pytest.raises(HostError, match="Unknown cluster config"):
        host.reset(Shape(3, 1, "leader-epoch", {"no.such.setting": 1}))
    assert len(host.snapshot()["brokers"]) == 5  # the failed reset kept the cluster


def test_the_snapshot_keeps_only_the_newest_records_of_each_replica(tmp_path: Path) -> None:
    host = make_host(tmp_path, shape=Shape(1, SEED, "leader-epoch", {}))
    host.apply("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 1})
    for batch in range(3):
        host.apply("produce", {"topic": "t", "values": [f"v{batch}-{i}" for i in range(100)], "acks": 1})
        host.step_until("produce_acknowledged")
    host.play()
    host.tick(wall_ms=2000)   # (a rewind may not go past the furthest step reached)
    host.pause()

    records = host.snapshot()["partitions"][0]["replica_states"]["1"]["records"]

    assert len(records) == 200
    assert records[0]["offset"] == 100 and records[-1] == {"offset": 299, "key": None, "value": "v2-99"}
