"""Every lesson of the course, in order, read once per process; and `lessons check`'s verdicts.

`lessons()` loads each folder (lessons/schema.py); a broken folder is left out of the course and
its error kept in `broken()` (logged, and listed on the index page), so one bad file cannot take
every lesson page down — `lessons check`, which runs in the test suite, refuses it. `check(lesson)`
plays a lesson headless (lessons/player.py) and lists every disagreement between what the lesson
says and what the engine does.
"""
from __future__ import annotations

import functools
import logging
import tempfile
from dataclasses import dataclass
from typing import Any

from lessons import answers, player
from lessons.schema import LESSONS_DIR, Lesson, LessonError, lesson_folders, load

logger = logging.getLogger(__name__)


@functools.lru_cache(maxsize=1)
def _load_all(root: str = LESSONS_DIR) -> tuple[tuple[Lesson, ...], tuple[str, ...]]:
    good, bad = [], []
    for folder in lesson_folders(root):
        try:
            good.append(load(folder))
        except LessonError as error:
            logger.error("lesson left out of the course: %s", error)
            bad.append(str(error))
    return tuple(good), tuple(bad)


def lessons() -> tuple[Lesson, ...]:
    return _load_all()[0]


def broken() -> tuple[str, ...]:
    """Why each lesson folder that failed to load was left out."""
    return _load_all()[1]


def by_slug(slug: str) -> Lesson | None:
    for lesson in lessons():
        if lesson.slug == slug:
            return lesson
    return None


@dataclass
class Problem:
    lesson: str
    beat: str | None
    message: str

    def __str__(self) -> str:
        return f"{self.lesson}" + (f": beat {self.beat!r}" if self.beat else "") + f": {self.message}"


@dataclass
class Verdict:
    lesson: str
    questions: int
    problems: list[Problem]
    run: player.LessonRun | None

    def to_dict(self) -> dict[str, Any]:
        return {"lesson": self.lesson, "questions": self.questions, "ok": not self.problems,
                "problems": [str(p) for p in self.problems],
                "answers": self.run.answers() if self.run else {}, "digest": self.run.digest if self.run else None}


def check_folder(folder: str) -> Verdict:
    """Load and check one folder; a schema error is a problem like any other."""
    try:
        lesson = load(folder)
    except LessonError as error:
        name = folder.rstrip("/").rsplit("/", 1)[-1]
        return Verdict(name, 0, [Problem(name, error.beat, str(error))], None)
    return check(lesson)


def check(lesson: Lesson) -> Verdict:
    """Play the lesson; every question's engine answer must equal what its explanation assumes,
    no hint may name the right answer, every `do` beat's `instead` must satisfy its check."""
    problems: list[Problem] = []
    with tempfile.TemporaryDirectory(prefix=f"lesson-{lesson.slug}-") as data_dir:
        try:
            run = player.play(lesson, data_dir)
        except player.PlayError as error:
            return Verdict(lesson.slug, len(lesson.questions), [Problem(lesson.slug, error.beat, str(error))], None)
    for beat, result in zip(lesson.beats, run.results, strict=True):
        if beat.do is not None and not result.check_passed:
            problems.append(Problem(lesson.slug, beat.id, "after its 'instead' steps, do.check is not true"))
        question = beat.question
        if question is None:
            continue
        if result.problem:
            problems.append(Problem(lesson.slug, beat.id, f"question: the engine gives no answer: {result.problem}"))
            continue
        try:
            expect = answers.expected(question, question.expect)
        except ValueError as error:
            problems.append(Problem(lesson.slug, beat.id, f"question.expect: {error}"))
            continue
        if not answers.same(expect, result.answer):
            problems.append(Problem(lesson.slug, beat.id, f"question: the explanation assumes {question.expect!r} "
                                                          f"but the engine answers {result.value!r}"))
        for hint in question.hints:
            try:
                if answers.same(answers.expected(question, hint.when), result.answer):
                    problems.append(Problem(lesson.slug, beat.id, f"hint {hint.hint!r} is for the right answer"))
            except ValueError as error:
                problems.append(Problem(lesson.slug, beat.id, f"hint {hint.hint!r}: {error}"))
        if not result.evidence:
            problems.append(Problem(lesson.slug, beat.id, "question: its answer has no evidence to highlight"))
    return Verdict(lesson.slug, len(lesson.questions), problems, run)
