"""Hidden checks of exercise 06: after a crash and a restart on the same checkpoint, the sink holds
every committed record of the topic exactly once, and the restart replayed the crashed batch."""
from __future__ import annotations

from collections import Counter

from spark_exercises.grader.checks import CORRECT, Question, as_int, as_tuples

TOPIC = "transfers"
CRASH_AT_BATCH = 2


def _sink(answers) -> list[tuple]:
    return as_tuples(answers["sink_rows"], "sink_rows", ("partition", "offset"))


def _crashed_and_replayed(answers) -> str:
    """Why the run does not show a crash and a replay ("" when it does)."""
    restarted = as_int(answers["restarted_batch"], "restarted_batch")
    if restarted != CRASH_AT_BATCH:
        return ("the restarted query did not begin by replaying the batch that crashed: does write_batch call "
                "crash_once(batch_id) after writing, and does the restart use the same checkpoint?")
    return ""


def _no_gap(answers, lab):
    got = set(_sink(answers))
    expected = {(r["partition"], r["offset"]) for r in lab.records(TOPIC)}
    missing = len(expected - got)
    extra = len(got - expected)
    if missing or extra:
        problems = [f"{missing} committed record(s) of {TOPIC} missing from the sink"] if missing else []
        problems += [f"{extra} row(s) that are not records of {TOPIC}"] if extra else []
        return False, "; ".join(problems)
    problem = _crashed_and_replayed(answers)
    return (False, problem) if problem else (True, CORRECT)


def _no_duplicate(answers, lab):
    counts = Counter(_sink(answers))
    twice = sum(1 for n in counts.values() if n > 1)
    if twice:
        everything = {(r["partition"], r["offset"]) for r in lab.records(TOPIC)}
        if twice >= len(everything):
            return False, (f"{twice} records are in the sink more than once — all of them: did the restart start "
                           "from a new checkpoint?")
        return False, (f"{twice} records are in the sink more than once: the replayed batch was written again; make "
                       "writing a batch id twice change nothing")
    problem = _crashed_and_replayed(answers)
    return (False, problem) if problem else (True, CORRECT)


def _restarted(answers, lab):
    problem = _crashed_and_replayed(answers)
    return (False, problem) if problem else (True, CORRECT)


QUESTIONS = [
    Question("no-gap", "Every record reaches the sink across the crash", 2, ("sink_rows", "restarted_batch"), _no_gap),
    Question("no-duplicate", "No record is in the sink twice", 3, ("sink_rows", "restarted_batch"), _no_duplicate),
    Question("replayed-batch", "The restart replays the batch that crashed", 1, ("restarted_batch",), _restarted),
]
