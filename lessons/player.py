"""Play a lesson headless, beat by beat, and compute every question's answer from the engine.

This is `lessons check` and the golden traces: a fresh cluster per scenario the lesson plays,
each beat's steps applied as the scenario runner applies them (engine.scenarios.runner), a `do`
beat's `instead` steps in place of the learner, and after each beat its question's query run over
the cluster and the beat's events. The lab's player (lessons/live.py) plays the same steps on a
lab session's clock; the engine is deterministic, so both reach the same state and answers.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field
from typing import Any

from engine.cluster import Cluster
from engine.scenarios.runner import STEP_ERRORS, run_step, scenario_cluster, step_command
from engine.scenarios.schema import check_step
from lessons import answers, queries
from lessons.schema import Beat, Lesson


class PlayError(RuntimeError):
    """A beat that cannot be played as written (a step failed that was not expected to)."""

    def __init__(self, message: str, beat: str) -> None:
        super().__init__(message)
        self.beat = beat


@dataclass
class BeatResult:
    beat: str
    answer: Any = None                 # the engine's answer, in the question's form
    value: Any = None                  # the query's raw value
    evidence: list[dict] = field(default_factory=list)
    problem: str | None = None         # why the answer could not be computed
    check_passed: bool | None = None   # a `do` beat: does its check hold after `instead`?


@dataclass
class LessonRun:
    lesson: Lesson
    results: list[BeatResult]
    events: int
    digest: str

    def answers(self) -> dict[str, Any]:
        return {r.beat: r.answer for r in self.results if r.problem is None and r.answer is not None}


def apply_step(cluster: Cluster, index: int, step: dict) -> str | None:
    """One scenario step as the runner applies it (a `do` beat's stand-in steps have index -1);
    the error text, or None."""
    command = step_command(step)
    name = f"step {index} ({command})" if index >= 0 else f"the stand-in step {command}"
    try:
        run_step(cluster, command, check_step(command, step[command] or {}), max(index, 0))
    except STEP_ERRORS as error:
        if step.get("expect_error"):
            return None
        return f"{name} failed: {error}"
    if step.get("expect_error"):
        return f"{name} was expected to fail but succeeded"
    return None


def play(lesson: Lesson, data_dir: str) -> LessonRun:
    """Play every beat of `lesson` into fresh clusters under `data_dir`."""
    digest = hashlib.sha256()
    lesson_events: list[dict] = []
    beat_events: list[dict] = []
    count = 0

    def trace(event: Any) -> None:
        nonlocal count
        data = event.to_dict()
        digest.update(json.dumps(data, sort_keys=True).encode())
        item = queries.event_item(data)
        lesson_events.append(item)
        beat_events.append(item)
        count += 1

    cluster: Cluster | None = None
    results = []
    for beat in lesson.beats:
        scenario = lesson.scenarios[beat.scenario]
        if beat.starts_scenario or cluster is None:
            lesson_events.clear()
            cluster = scenario_cluster(scenario, os.path.join(data_dir, f"beat-{beat.index}"), trace=trace)
        beat_events.clear()
        for index, step in beat.steps(scenario):
            problem = apply_step(cluster, index, step)
            if problem:
                raise PlayError(problem, beat.id)
        results.append(evaluate_beat(beat, queries.World(cluster, list(beat_events), list(lesson_events))))
    return LessonRun(lesson, results, count, digest.hexdigest())


def evaluate_beat(beat: Beat, world: queries.World) -> BeatResult:
    """The beat's question answered from `world` (and a `do` beat's check)."""
    result = BeatResult(beat.id)
    if beat.do is not None:
        try:
            result.check_passed = queries.evaluate(beat.do.check, world).value is True
        except (queries.QueryError, ValueError, TypeError):
            result.check_passed = False
    question = beat.question
    if question is None:
        return result
    try:
        found = queries.evaluate(question.answer, world)
        result.value = found.value
        result.answer = answers.engine(question, found.value)
        result.evidence = list(found.evidence)
        for query in question.evidence:
            result.evidence += queries.evaluate(query, world).evidence
    except (queries.QueryError, ValueError, TypeError) as error:
        result.problem = str(error)
    return result
