"""A session's time machine (lab/host.py): rewinds land where asked, around every kind of command,
blocked consumers included; a command never cuts the future silently, and the cut can be undone;
checkpoints make rewinds short without changing a single event or byte."""
from __future__ import annotations

import hashlib
import os
import random
from pathlib import Path

import pytest

from lab.host import HostError, SessionHost, Shape

SHAPE = Shape(3, 5, "leader-epoch", {})


def digest(run_dir: str) -> dict[str, str]:
    out = {}
    for folder, _, files in os.walk(run_dir):
        for name in files:
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, run_dir)] = hashlib.sha256(f.read()).hexdigest()
    return out


def steps(host: SessionHost, n: int) -> list[str]:
    """`n` clock steps; the events' JSON they caused."""
    out = []
    for _ in range(n):
        out += host.step().texts
    return out


def consumer_story(host: SessionHost, look: dict[int, tuple] | None = None, every: int = 23) -> list[str]:
    """The issue's reproduction: a topic, two consumers joining (blocked in poll until their group
    is stable), a poll — with looks at the state along the way (step -> (snapshot, files))."""
    texts: list[str] = []

    def run(n: int) -> None:
        for _ in range(n):
            texts.extend(host.step().texts)
            if look is not None and host.steps % every == 0 and not host.clock()["running"]:
                look[host.steps] = (host.snapshot(), digest(host.run_dir))
    texts += host.apply("create_topic", {"topic": "orders", "partitions": 3, "replication_factor": 3}).texts
    run(20)
    texts += host.apply("consumer_join", {"member": "c1", "group": "g", "topics": ["orders"]}).texts
    run(500)
    texts += host.apply("produce", {"topic": "orders", "values": ["a", "b", "c", "d"], "acks": "all"}).texts
    texts += host.apply("consumer_join", {"member": "c2", "group": "g", "topics": ["orders"]}).texts
    run(700)
    texts += host.apply("consumer_poll", {"member": "c1", "timeout_ms": 2000}).texts
    texts += host.apply("kill_broker", {"broker": 2}).texts
    run(600)
    return texts


def test_rewind_lands_on_the_asked_step_around_blocked_consumer_commands(tmp_path: Path) -> None:
    looks: dict[int, tuple] = {}
    host = SessionHost(str(tmp_path / "s"), SHAPE)
    consumer_story(host, looks)
    end = host.steps
    assert len(looks) >= 8
    targets = random.Random(3).sample(sorted(looks), 8)

    for target in targets + [end // 3, 2 * end // 3]:
        host.rewind(target)
        assert host.steps == target, f"rewind to {target} landed at {host.steps}"
        if target in looks:
            state, files = looks[target]
            assert host.snapshot() == state, f"the state at step {target} differs"
            assert digest(host.run_dir) == files, f"the files at step {target} differ"


def test_a_blocked_join_takes_one_action_per_step(tmp_path: Path) -> None:
    host = SessionHost(str(tmp_path), SHAPE)
    host.apply("create_topic", {"topic": "t", "partitions": 2, "replication_factor": 3})

    joined = host.apply("consumer_join", {"member": "c1", "group": "g", "topics": ["t"]})

    assert joined.record.running and host.clock()["running"][0]["index"] == joined.record.index
    before = host.steps
    host.step()
    assert host.steps == before + 1   # one action, whatever the join waits for
    while host.clock()["running"]:
        host.step()
    assert host.model()["groups"][0]["state"] == "Stable"
    assert host.timeline()["marks"][-1].get("running") is None


def test_a_rewind_just_after_an_event_keeps_the_commands_before_it_only(tmp_path: Path) -> None:
    host = SessionHost(str(tmp_path), SHAPE)
    host.apply("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})
    steps(host, 10)
    step = host.steps
    first = host.apply("produce", {"topic": "t", "value": "one", "acks": 1})
    second = host.apply("produce", {"topic": "t", "value": "two", "acks": 1})   # same step
    steps(host, 30)

    host.rewind(step, after_seq=first.record.first_seq)
    assert host.steps == step and host.timeline()["applied"] == first.record.index + 1
    host.rewind(step, commands=second.record.index + 1)
    assert host.timeline()["applied"] == second.record.index + 1
    host.rewind(step, after_seq=first.record.first_seq - 1)
    assert host.timeline()["applied"] == first.record.index


def test_a_command_after_a_rewind_asks_first_and_can_be_undone(tmp_path: Path) -> None:
    host = SessionHost(str(tmp_path), SHAPE)
    consumer_story(host)
    end_step, end_state, commands = host.steps, host.snapshot(), len(host.log)
    host.rewind(end_step // 2)

    with pytest.raises(HostError) as asked:
        host.apply("produce", {"topic": "orders", "value": "x"})
    assert asked.value.kafka_error == "FUTURE_EXISTS" and len(host.log) == commands
    host.apply("produce", {"topic": "orders", "value": "x"}, discard_future=True)
    assert host.timeline()["future"] == 0 and host.timeline()["undo"]["commands"] > 0

    host.undo_discard()

    assert len(host.log) == commands and host.timeline()["future"] > 0 and host.timeline()["undo"] is None
    host.rewind(end_step)
    assert host.snapshot() == end_state


def test_rewinds_from_checkpoints_give_the_bytes_and_events_of_a_replay_from_the_start(tmp_path: Path) -> None:
    with_checkpoints = SessionHost(str(tmp_path / "fast"), SHAPE)
    story = consumer_story(with_checkpoints)
    assert with_checkpoints.checkpoints.taken >= 2
    from_start = SessionHost(str(tmp_path / "slow"), SHAPE, checkpoints=False)
    assert consumer_story(from_start) == story   # checkpoints change nothing on the way
    rng = random.Random(11)

    for target in sorted(rng.sample(range(30, with_checkpoints.steps - 50), 6), reverse=True):
        with_checkpoints.rewind(target)
        from_start.rewind(target)
        assert with_checkpoints.snapshot() == from_start.snapshot()
        assert digest(with_checkpoints.run_dir) == digest(from_start.run_dir)
        assert with_checkpoints.series.to_dict() == from_start.series.to_dict()   # the charts too
        assert steps(with_checkpoints, 40) == steps(from_start, 40), f"events after step {target} differ"


def test_a_new_command_drops_the_checkpoints_of_the_future_it_cuts(tmp_path: Path) -> None:
    host = SessionHost(str(tmp_path), SHAPE)
    consumer_story(host)
    middle = host.steps // 2
    host.rewind(middle)

    host.apply("produce", {"topic": "orders", "value": "another future"}, discard_future=True)

    assert all(e.step <= middle for e in host.checkpoints.entries)
    assert all(os.path.isdir(e.path) for e in host.checkpoints.entries)


def test_a_reopened_session_resumes_from_the_checkpoints_its_log_owns(tmp_path: Path) -> None:
    host = SessionHost(str(tmp_path / "s"), SHAPE)
    consumer_story(host)
    log, position, state = list(host.log), host.position(), host.snapshot()
    files, kept = digest(host.run_dir), len(host.checkpoints.entries)
    host.close()                                  # the session leaves memory; its checkpoints stay

    resumed = SessionHost(str(tmp_path / "s"), SHAPE, log=log, position=position)

    assert len(resumed.checkpoints.entries) >= kept > 1
    assert resumed.snapshot() == state and resumed.position() == position and digest(resumed.run_dir) == files
    resumed.close()
    other = list(log)
    other[0] = type(log[0])(**{**log[0].__dict__, "args": {**log[0].args, "partitions": 2}})
    elsewhere = SessionHost(str(tmp_path / "s"), SHAPE, log=other[:1], position=(log[0].at_step, log[0].at_time_ms))
    assert all(e.commands == 0 for e in elsewhere.checkpoints.entries)   # another line of time: not reused
