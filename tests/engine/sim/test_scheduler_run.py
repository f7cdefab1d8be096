"""Scheduler.run: the one "run until X or a deadline" loop, in the same order as stepping by hand."""
from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.sim import Scheduler


def _workload(scheduler: Scheduler, log: list, seed: int) -> None:
    """Actions that schedule more actions (some at once, some later, some cancelled), seeded."""
    rng = random.Random(seed)

    def action(name: str, depth: int) -> None:
        log.append((scheduler.now_ms, name))
        if depth < 3:
            for child in range(rng.randint(0, 3)):
                entry = scheduler.schedule(rng.choice([0, 0, 1, 5, 50, 400]),
                                           lambda n=f"{name}.{child}": action(n, depth + 1),
                                           foreground=rng.random() < 0.5)
                if rng.random() < 0.1:
                    scheduler.cancel(entry)

    for root in range(6):
        scheduler.schedule(rng.randint(0, 300), lambda n=str(root): action(n, 0))


def _by_hand(scheduler: Scheduler, until_ms: int, stop, advance: bool) -> bool:
    """The loop as the engine wrote it seven times before Scheduler.run."""
    while not stop():
        nxt = scheduler.next_time()
        if nxt is None or nxt > until_ms:
            if advance:
                scheduler.advance_to(until_ms)
            return False
        scheduler.step()
    return True


def _logging(schedule_at: list[int]) -> tuple[Scheduler, list]:
    scheduler, log = Scheduler(), []
    for at in schedule_at:
        scheduler.schedule(at, lambda at=at: log.append((scheduler.now_ms, at)))
    return scheduler, log


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), until_ms=st.integers(0, 1_500), stop_after=st.integers(1, 60),
       advance=st.booleans())
def test_run_takes_the_same_actions_in_the_same_order_as_the_hand_written_loop(seed, until_ms, stop_after, advance):
    runs = []
    for use_run in (False, True):
        scheduler, log = Scheduler(), []
        _workload(scheduler, log, seed)
        stop = lambda log=log: len(log) >= stop_after  # noqa: E731
        if use_run:
            stopped = scheduler.run(until_ms, stop, advance=advance)
        else:
            stopped = _by_hand(scheduler, until_ms, stop, advance)
        runs.append((stopped, log, scheduler.now_ms, scheduler.steps, scheduler.next_time()))
    assert runs[0] == runs[1]


def test_a_run_to_a_deadline_takes_every_action_due_by_then_and_moves_the_clock_there():
    scheduler, log = _logging([10, 50, 50, 51])
    assert scheduler.run(until_ms=50) is False
    assert log == [(10, 10), (50, 50), (50, 50)] and scheduler.now_ms == 50
    assert scheduler.run(until_ms=80) is False
    assert log[-1] == (51, 51) and scheduler.now_ms == 80


def test_a_run_without_advance_leaves_the_clock_at_the_last_action():
    scheduler, log = _logging([10, 20])
    assert scheduler.run(until_ms=1_000, advance=False) is False
    assert len(log) == 2 and scheduler.now_ms == 20


def test_a_run_ends_right_after_the_action_that_makes_stop_true():
    scheduler, log = _logging([10, 20, 30])
    assert scheduler.run(until_ms=1_000, stop=lambda: len(log) == 2) is True
    assert log == [(10, 10), (20, 20)] and scheduler.now_ms == 20 and scheduler.next_time() == 30


def test_a_run_whose_stop_already_holds_takes_no_action_and_leaves_the_clock():
    scheduler, log = _logging([10])
    assert scheduler.run(until_ms=500, stop=lambda: True) is True
    assert log == [] and scheduler.now_ms == 0


def test_max_steps_bounds_the_actions_of_one_run():
    scheduler, log = _logging([1, 2, 3, 4])
    assert scheduler.run(until_ms=100, max_steps=3) is False
    assert len(log) == 3 and scheduler.now_ms == 3


def test_a_run_with_nothing_scheduled_moves_the_clock_to_the_deadline_and_reports_no_stop():
    scheduler = Scheduler()
    assert scheduler.run(until_ms=250, stop=lambda: False) is False
    assert scheduler.now_ms == 250


def test_a_run_without_a_deadline_drains_the_queue():
    scheduler, log = _logging([5, 500, 5_000])
    assert scheduler.run() is False
    assert len(log) == 3 and scheduler.now_ms == 5_000 and scheduler.next_time() is None


def test_a_cancelled_action_does_not_run_or_hold_the_run_back():
    scheduler, log = _logging([10])
    scheduler.cancel(scheduler.schedule(5, lambda: log.append("cancelled")))
    assert scheduler.run(until_ms=20) is False
    assert log == [(10, 10)]
