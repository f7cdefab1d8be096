"""Hidden checks of exercise 04: acknowledged records lost to an unclean election, offsets reused.

Records are told apart by (topic, partition, value): the scenario's values are unique, and
offsets are exactly what cannot be trusted here.
"""
from __future__ import annotations

from spark_exercises.grader.checks import AnswerError, Question, as_list, as_tuples, compare_sets

TOPIC = "payments"


def _truth(lab) -> tuple[list[dict], list[dict]]:
    """(lost acknowledged records, records the producer was told failed), from the producer's log."""
    present = {(r["partition"], r["value"]) for r in lab.records(TOPIC)}
    sent = [p for p in lab.produced if p["topic"] == TOPIC]
    lost = [p for p in sent if p["acked"] and (p["partition"], p["value"]) not in present]
    failed = [p for p in sent if not p["acked"]]
    return lost, failed


def _lost(answers, lab):
    got = as_list(answers["lost"], "lost")
    if not all(isinstance(v, str) for v in got):
        raise AnswerError("`lost` should be a list of record values (strings such as the ones in the topic)")
    lost, failed = _truth(lab)
    ok, feedback = compare_sets(got, [p["value"] for p in lost], "records")
    if not ok and set(got) & {p["value"] for p in failed}:
        feedback += "; a record whose send failed was never acknowledged, so it cannot be lost"
    elif not ok and len(set(got)) < len(lost):
        feedback += "; matching on offsets misses records whose offset now holds another record"
    return ok, feedback


def _reused(answers, lab):
    got = as_tuples(answers["reused_offsets"], "reused_offsets", ("partition", "offset"))
    lost, _ = _truth(lab)
    present = {(r["partition"], r["offset"]) for r in lab.records(TOPIC)}
    expected = [(p["partition"], p["offset"]) for p in lost if (p["partition"], p["offset"]) in present]
    return compare_sets(got, expected, "offsets")


QUESTIONS = [
    Question("lost", "Acknowledged records the topic no longer has", 3, ("lost",), _lost),
    Question("reused-offsets", "Offsets of lost records now holding another record", 2, ("reused_offsets",), _reused),
]
