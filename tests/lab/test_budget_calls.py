"""Issue 11, finding 3: no call into a lab session holds its worker thread for good.

Every host call has a budget — scheduler actions (Limits.max_actions_per_call), wall-clock time
(KAFKA_LAB_CALL_WALL_BUDGET_MS) and virtual time (KAFKA_LAB_CALL_VIRTUAL_BUDGET_MS) — and stops
between two scheduler actions, with an error naming the budget, when it would go over. The session
stays usable, and nothing a stopped call did is recorded that a replay could not repeat.

Each test runs the call under a guard (a thread joined with a timeout): before the budgets, these
calls ran for a minute or never returned.
"""
from __future__ import annotations

import faulthandler
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from lab.host import HostError, SessionHost, Shape
from lab.limits import Limits

GUARD_S = 30.0
WALL_BUDGET_MS = 1500
# Every broker timer due every millisecond: legal, and a storm of actions per virtual second.
STORM = {"replica.high.watermark.checkpoint.interval.ms": 1, "log.flush.offset.checkpoint.interval.ms": 1,
         "log.retention.check.interval.ms": 1}


@pytest.fixture(autouse=True)
def short_wall_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_LAB_CALL_WALL_BUDGET_MS", str(WALL_BUDGET_MS))


def guarded(call: Callable[[], Any], seconds: float = GUARD_S) -> tuple[Any, float]:
    """(what `call()` returned or raised, its wall seconds); fails the test, with every thread's
    stack, if it is still running after `seconds` (its daemon thread is left behind)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["result"] = call()
        except BaseException as error:  # noqa: BLE001 - handed to the test
            box["result"] = error
    started = time.monotonic()
    thread = threading.Thread(target=run, daemon=True, name="guarded-call")
    thread.start()
    thread.join(seconds)
    if thread.is_alive():
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        pytest.fail(f"the call was still running after {seconds} s")
    return box["result"], time.monotonic() - started


def step_on(host: SessionHost) -> None:
    try:
        host.step()
    except HostError as error:
        assert error.kafka_error == "BUDGET_EXCEEDED", error


def storm_host(tmp_path: Path, **kwargs: Any) -> SessionHost:
    return SessionHost(str(tmp_path / "s"), Shape(3, 1, "leader-epoch", dict(STORM)), **kwargs)


def test_step_until_in_a_timer_storm_stops_at_the_wall_budget_and_the_session_goes_on(tmp_path: Path) -> None:
    host = storm_host(tmp_path)
    before = host.steps

    error, seconds = guarded(lambda: host.step_until("leader_elected"))

    assert isinstance(error, HostError), error
    assert "KAFKA_LAB_CALL_WALL_BUDGET_MS" in error.message and "wall" in error.message
    assert seconds < WALL_BUDGET_MS / 1000 + 5
    assert host.steps > before
    stepped = host.step()
    assert stepped.actions == 1
    host.apply("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})
    assert "t" in host.cluster.topics


def test_an_inline_command_over_its_budget_is_withdrawn_and_the_state_is_as_before(tmp_path: Path) -> None:
    """create_topic waits for its leaders; with the controller's broker dead that wait is the
    ZooKeeper session timeout (18 virtual s: a hundred thousand actions in a storm)."""
    host = storm_host(tmp_path)
    host.apply("kill_broker", {"broker": host.cluster.controller.broker_id})
    before = (host.snapshot(), host.position(), len(host.log))

    error, seconds = guarded(lambda: host.apply("create_topic", {"topic": "t", "partitions": 3,
                                                                 "replication_factor": 3}))

    assert isinstance(error, HostError), error
    assert error.kafka_error == "BUDGET_EXCEEDED" and "wall" in error.message
    assert "create_topic" in error.message and "not applied" in error.message
    assert seconds < 2 * WALL_BUDGET_MS / 1000 + 10   # the call, then putting the cluster back
    assert (host.snapshot(), host.position(), len(host.log)) == before
    assert "t" not in host.cluster.topics
    assert host.timeline()["future"] == 0
    host.apply("restart_broker", {"broker": 1})      # the session goes on
    assert len(host.log) == 2


def test_a_scenario_step_that_waits_ten_virtual_minutes_stops_at_the_budget_and_step_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A consumer polling ten minutes for records that never come (legal), played whole by Step."""
    monkeypatch.setenv("KAFKA_LAB_CALL_VIRTUAL_BUDGET_MS", "60000")
    monkeypatch.setenv("KAFKA_LAB_CALL_WALL_BUDGET_MS", "60000")   # the virtual budget is the one under test
    host = SessionHost(str(tmp_path / "s"), Shape(3, 1, "leader-epoch", {}))
    host.load_scenario({"name": "long poll", "cluster": {"brokers": 3, "seed": 1},
                        "steps": [{"create_topic": {"topic": "t", "partitions": 1, "replication_factor": 3}},
                                  {"consumer_join": {"member": "c", "group": "g", "topics": ["t"]}},
                                  {"consumer_poll": {"member": "c", "timeout_ms": 600_000}},
                                  {"produce": {"topic": "t", "value": "after"}}]})
    host.step()
    host.step()
    started = host.now_ms

    error, seconds = guarded(host.step)

    assert isinstance(error, HostError), error
    assert error.kafka_error == "BUDGET_EXCEEDED"
    assert "virtual-time budget (KAFKA_LAB_CALL_VIRTUAL_BUDGET_MS=60000)" in error.message
    assert started < host.now_ms <= started + 60_000
    clock = host.clock()
    assert clock["scenario"]["next_step"] == 2 and clock["scenario"]["in_progress"]
    assert [r["command"] for r in clock["running"]] == [{"consumer_poll": {"member": "c", "timeout_ms": 600_000}}]
    for _ in range(10):                                  # Step again goes on where it stopped
        if host.clock()["scenario"]["next_step"] == 2:
            step_on(host)
    assert host.clock()["scenario"]["next_step"] == 3 and host.now_ms >= started + 600_000
    host.step()
    assert host.clock()["scenario"]["done"]


def test_a_cluster_whose_timer_fires_every_0_ms_is_refused_and_the_old_one_stays(tmp_path: Path) -> None:
    """A timer loop at one virtual instant: the cluster's start-up never went idle."""
    host = SessionHost(str(tmp_path / "s"), Shape(3, 1, "leader-epoch", {}))
    host.apply("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})
    zero = {"log.retention.check.interval.ms": 0}

    for restart in (lambda: host.reset(Shape(3, 1, "leader-epoch", zero)),
                    lambda: host.load_scenario({"name": "zero", "cluster": {"brokers": 3, "config": zero},
                                                "steps": [{"run": {"ms": 10}}]})):
        error, seconds = guarded(restart)
        assert isinstance(error, HostError), error
        assert seconds < WALL_BUDGET_MS / 1000 + 5
        assert "t" in host.cluster.topics and len(host.log) == 1
    host.apply("produce", {"topic": "t", "value": "still here"})


def test_a_cluster_start_up_spends_from_the_budget_and_a_refused_one_keeps_the_old_cluster(tmp_path: Path) -> None:
    host = SessionHost(str(tmp_path / "s"), Shape(1, 1, "leader-epoch", {}), limits=Limits(max_actions_per_call=10))

    error, _ = guarded(lambda: host.reset(Shape(9, 1, "leader-epoch", {})))   # 19 actions to start

    assert isinstance(error, HostError) and error.kafka_error == "BUDGET_EXCEEDED", error
    assert "starting the cluster" in error.message and "KAFKA_LAB_MAX_ACTIONS_PER_CALL=10" in error.message
    assert len(host.cluster.brokers) == 1
    host.step()


def test_a_rewind_beyond_the_recorded_end_is_refused(tmp_path: Path) -> None:
    host = storm_host(tmp_path)
    for _ in range(20):
        host.step()
    where = host.position()

    error, _ = guarded(lambda: host.rewind(host.steps + 50_000))

    assert isinstance(error, HostError) and error.kafka_error == "INVALID_REQUEST", error
    assert "beyond" in error.message
    assert host.position() == where
    error, _ = guarded(lambda: host.rewind(10**15))
    assert isinstance(error, HostError)


def test_a_rewind_replays_at_most_max_actions_per_call_and_says_where_it_stopped(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_LAB_CALL_WALL_BUDGET_MS", "120000")   # the actions budget is the one under test
    host = storm_host(tmp_path, limits=Limits(max_actions_per_call=500), checkpoints=False)
    for _ in range(4):
        guarded(lambda: host.step_until("leader_elected"))   # 500 actions each, no such event
    end = host.steps
    host.rewind(10)

    result, _ = guarded(lambda: host.rewind(end - 5))

    assert not isinstance(result, BaseException), result
    assert 10 < host.steps < end - 5
    notices = host.take_notices()
    assert any("500" in n["message"] and "actions" in n["message"] for n in notices), notices
    host.rewind(100)                                     # the session goes on
    assert host.steps == 100


def test_a_live_tick_far_behind_moves_at_most_the_virtual_budget(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_LAB_CALL_VIRTUAL_BUDGET_MS", "60000")
    host = SessionHost(str(tmp_path / "s"), Shape(3, 1, "leader-epoch", {}))
    host.play(10.0)
    start = host.now_ms

    result, _ = guarded(lambda: host.tick(wall_ms=10**12))

    assert not isinstance(result, BaseException), result
    assert host.now_ms - start <= 60_000
    assert host.mode == "live"
