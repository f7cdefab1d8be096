"""The scheduler: one heap of (time, priority, sequence) that makes every run repeatable."""
from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.sim import Scheduler


def _recorder(scheduler: Scheduler, log: list) -> Callable:
    def schedule(delay_ms: int, name: str, **kwargs):
        return scheduler.schedule(delay_ms, lambda: log.append((scheduler.now_ms, name)), label=name, **kwargs)
    return schedule


def _run_all(scheduler: Scheduler) -> None:
    while scheduler.step() is not None:
        pass


def test_it_runs_actions_due_at_the_same_time_in_the_order_they_were_scheduled():
    scheduler, log = Scheduler(), []
    schedule = _recorder(scheduler, log)
    for name in "abcdef":
        schedule(5, name)
    _run_all(scheduler)
    assert [name for _, name in log] == list("abcdef")


def test_it_runs_earlier_actions_first_whatever_the_scheduling_order():
    scheduler, log = Scheduler(), []
    schedule = _recorder(scheduler, log)
    schedule(30, "late")
    schedule(10, "early")
    schedule(20, "middle")
    _run_all(scheduler)
    assert log == [(10, "early"), (20, "middle"), (30, "late")]


def test_it_lets_a_lower_priority_number_go_first_at_the_same_time_but_never_before_an_earlier_time():
    scheduler, log = Scheduler(), []
    schedule = _recorder(scheduler, log)
    schedule(5, "normal")
    schedule(5, "urgent", priority=-1)
    schedule(4, "earlier-but-lazy", priority=9)
    schedule(5, "lazy", priority=1)
    _run_all(scheduler)
    assert [name for _, name in log] == ["earlier-but-lazy", "urgent", "normal", "lazy"]


def test_it_runs_an_action_scheduled_for_now_after_those_already_due_now():
    scheduler, log = Scheduler(), []
    schedule = _recorder(scheduler, log)
    scheduler.schedule(1, lambda: schedule(0, "spawned"))
    schedule(1, "queued")
    _run_all(scheduler)
    assert log == [(1, "queued"), (1, "spawned")]


def test_it_sets_the_clock_to_the_action_time_while_the_action_runs():
    scheduler, seen = Scheduler(), []
    scheduler.schedule(7, lambda: seen.append(scheduler.now_ms))
    scheduler.schedule(12, lambda: seen.append(scheduler.now_ms))
    first = scheduler.step()
    assert seen == [7] and scheduler.now_ms == 7 and first.time_ms == 7
    scheduler.step()
    assert seen == [7, 12] and scheduler.steps == 2


def test_it_schedules_relative_to_the_current_virtual_time():
    scheduler = Scheduler()
    scheduler.advance_to(100)
    entry = scheduler.schedule(5, lambda: None)
    assert entry.time_ms == 105 and scheduler.next_time() == 105


def test_it_refuses_to_schedule_in_the_past():
    with pytest.raises(ValueError, match="past"):
        Scheduler().schedule(-1, lambda: None)


def test_it_returns_none_and_keeps_the_clock_when_stepping_an_empty_queue():
    scheduler = Scheduler()
    scheduler.advance_to(42)
    assert scheduler.step() is None
    assert scheduler.now_ms == 42 and scheduler.steps == 0
    assert scheduler.next_time() is None and scheduler.pending() == 0


def test_it_never_runs_a_cancelled_action():
    scheduler, log = Scheduler(), []
    schedule = _recorder(scheduler, log)
    doomed = schedule(1, "doomed")
    schedule(2, "kept")
    scheduler.cancel(doomed)
    assert scheduler.next_time() == 2 and scheduler.pending() == 1
    _run_all(scheduler)
    assert log == [(2, "kept")]


def test_it_counts_foreground_work_until_it_runs():
    scheduler = Scheduler()
    assert not scheduler.has_foreground_work()
    scheduler.schedule(1, lambda: None)
    assert scheduler.has_foreground_work()
    scheduler.step()
    assert not scheduler.has_foreground_work()


def test_it_does_not_count_background_timers_as_foreground_work():
    scheduler = Scheduler()
    scheduler.schedule(1, lambda: None, foreground=False)
    assert not scheduler.has_foreground_work() and scheduler.pending() == 1


def test_it_drops_foreground_work_when_a_foreground_action_is_cancelled():
    scheduler = Scheduler()
    request = scheduler.schedule(10, lambda: None)
    scheduler.schedule(20, lambda: None, foreground=False)
    scheduler.cancel(request)
    assert not scheduler.has_foreground_work()
    assert scheduler.pending() == 1


def test_it_keeps_foreground_work_when_a_background_timer_is_cancelled():
    scheduler = Scheduler()
    scheduler.schedule(10, lambda: None)
    timer = scheduler.schedule(5, lambda: None, foreground=False)
    scheduler.cancel(timer)
    assert scheduler.has_foreground_work()


def test_it_treats_cancelling_twice_or_after_running_or_none_as_a_no_op():
    scheduler = Scheduler()
    ran = scheduler.schedule(1, lambda: None)
    twice = scheduler.schedule(2, lambda: None)
    still_pending = scheduler.schedule(3, lambda: None)
    scheduler.step()
    scheduler.cancel(ran)
    scheduler.cancel(twice)
    scheduler.cancel(twice)
    scheduler.cancel(None)
    assert scheduler.has_foreground_work()  # the count did not go below the one pending action
    scheduler.cancel(still_pending)
    assert not scheduler.has_foreground_work()
    assert scheduler.step() is None


def test_it_lets_an_action_cancel_itself_without_harm():
    scheduler = Scheduler()
    holder = {}
    holder["entry"] = scheduler.schedule(1, lambda: scheduler.cancel(holder["entry"]))
    scheduler.schedule(2, lambda: None)
    scheduler.step()
    assert scheduler.has_foreground_work() and scheduler.pending() == 1


def test_it_moves_the_clock_forward_with_advance_to_but_never_back():
    scheduler = Scheduler()
    scheduler.advance_to(50)
    assert scheduler.now_ms == 50
    scheduler.advance_to(20)
    assert scheduler.now_ms == 50


def test_it_runs_nothing_on_advance_to_and_never_moves_the_clock_back_for_an_overdue_action():
    scheduler, log = Scheduler(), []
    _recorder(scheduler, log)(10, "due")
    scheduler.advance_to(100)
    assert log == []
    scheduler.step()
    assert log == [(100, "due")]  # an overdue action runs at the current time; the clock never goes back
    assert scheduler.now_ms == 100


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 50), st.integers(-1, 1), st.integers(0, 9)), min_size=1, max_size=1500),
       st.data())
def test_sweeping_cancelled_entries_never_changes_what_runs_or_its_order(plan, data):
    """Cancel most entries (which sweeps the heap, see scheduler.COMPACT_AT), some of them after a
    few steps ran: the rest run in (time, priority, scheduling order), exactly once."""
    scheduler, log = Scheduler(), []
    entries = [scheduler.schedule(delay, lambda n=n: log.append(n), priority=priority)
               for n, (delay, priority, _) in enumerate(plan)]
    for n, (_, _, dice) in enumerate(plan):
        if dice < 7:  # ~70% cancelled
            scheduler.cancel(entries[n])
        if dice == 9 and data.draw(st.booleans()):
            scheduler.step()
    _run_all(scheduler)
    ran_early = [n for n in log if plan[n][2] < 7]  # run before their cancel came (a no-op then)
    live = [n for n in range(len(plan)) if plan[n][2] >= 7 or n in ran_early]
    assert sorted(log) == sorted(live)
    assert log == sorted(log, key=lambda n: (plan[n][0], plan[n][1], n))
    assert scheduler.pending() == 0 and not scheduler.has_foreground_work()


def test_a_heap_full_of_cancelled_time_outs_is_swept():
    scheduler = Scheduler()
    timers = [scheduler.schedule(30_000, lambda: None) for _ in range(5000)]
    for timer in timers:
        scheduler.cancel(timer)
    assert len(scheduler._queue) < 600  # swept as it filled with dead entries
    ran = []
    scheduler.schedule(1, lambda: ran.append(1))
    _run_all(scheduler)
    assert ran == [1] and scheduler.now_ms == 1
