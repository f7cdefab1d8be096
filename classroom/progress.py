"""A cohort's progress: learners × lessons and Spark exercises, and what to explain again.

Everything here is computed from rows already read — the cohort's learners, their
`LessonProgress` rows and their graded `Submission` rows — by pure functions, so a cohort of any
size costs one query per kind of row (`cohort_rows` makes them), never one per learner.

Invariants:
- a lesson's counts come from the lesson as it is now (lessons.catalog): beat ids a learner saw
  or answered in an older version of the lesson and that no longer exist are not counted;
- "right at first try" is the `right` the lesson socket recorded with the first answer
  (lessons.consumers): an answer never revealed has no verdict and counts as answered, not right;
- an exercise's best score is the gradebook's (spark_exercises.views.gradebook): the highest
  graded score, the latest one on a tie; attempts count graded submissions only (a notebook the
  grader could not grade is not the learner's attempt).
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lab.owners import user_key
from lessons import catalog, text
from lessons.models import LessonProgress
from lessons.schema import Lesson
from spark_exercises.grader.exercises import list_exercises
from spark_exercises.models import Submission

MIN_ANSWERS = 3          # "explain again" needs at least this many verdicts on a question
WRONG_SHARE = 0.5        # ... and at least this share of them wrong


# -- columns -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class LessonColumn:
    slug: str
    order: int
    title: str
    beats: tuple[str, ...]          # beat ids, in order
    questions: tuple[str, ...]      # the ids of the beats that ask a question


@dataclass(frozen=True)
class ExerciseColumn:
    slug: str
    number: str
    title: str
    max_score: int


def lesson_columns(lessons: Iterable[Lesson], lang: str) -> list[LessonColumn]:
    return [LessonColumn(lesson.slug, lesson.order, lesson.title(lang), tuple(b.id for b in lesson.beats),
                         tuple(b.id for b in lesson.questions)) for lesson in lessons]


def exercise_columns() -> list[ExerciseColumn]:
    return [ExerciseColumn(e.slug, e.number, e.title, e.max_score) for e in list_exercises()]


# -- cells -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LessonCell:
    started: bool
    seen: int
    beats: int
    right: int          # questions right at first try
    answered: int       # questions answered
    questions: int
    finished: bool

    @property
    def sort_key(self) -> tuple[int, int, int, int]:
        """Further along sorts higher: finished, then right at first try, then beats seen."""
        return (int(self.finished), self.right, self.seen, int(self.started))


@dataclass(frozen=True)
class ExerciseCell:
    best: int | None          # None: no graded submission
    max_score: int
    attempts: int
    best_pk: int | None = None

    @property
    def sort_key(self) -> tuple[int, int]:
        return (-1 if self.best is None else self.best, self.attempts)


def lesson_cell(column: LessonColumn, progress: Any | None) -> LessonCell:
    """One learner's cell of one lesson; `progress` is their LessonProgress row, or None."""
    if progress is None:
        return LessonCell(False, 0, len(column.beats), 0, 0, len(column.questions), False)
    beats, questions = set(column.beats), set(column.questions)
    seen = len(beats.intersection(progress.seen or []))
    answers = {k: v for k, v in (progress.answers or {}).items() if k in questions and isinstance(v, dict)}
    answered = sum(1 for v in answers.values() if "first" in v)
    right = sum(1 for v in answers.values() if v.get("right") is True)
    return LessonCell(True, seen, len(column.beats), right, answered, len(column.questions), bool(progress.finished))


def exercise_cell(column: ExerciseColumn, graded: Sequence[Any]) -> ExerciseCell:
    """`graded`: one learner's graded submissions of this exercise, oldest first."""
    best = None
    for s in graded:
        if best is None or s.score >= best.score:
            best = s
    if best is None:
        return ExerciseCell(None, column.max_score, 0)
    return ExerciseCell(best.score, best.max_score or column.max_score, len(graded), best.pk)


# -- the table ---------------------------------------------------------------------------------
@dataclass
class Row:
    learner: Any
    lessons: list[LessonCell]
    exercises: list[ExerciseCell]

    @property
    def name(self) -> str:
        return self.learner.get_full_name() or self.learner.get_username()

    @property
    def lessons_finished(self) -> int:
        return sum(1 for c in self.lessons if c.finished)

    @property
    def right(self) -> int:
        return sum(c.right for c in self.lessons)

    @property
    def answered(self) -> int:
        return sum(c.answered for c in self.lessons)

    @property
    def score(self) -> int:
        return sum(c.best or 0 for c in self.exercises)


@dataclass(frozen=True)
class LessonTotal:
    started: int
    finished: int
    right: int
    answered: int


@dataclass(frozen=True)
class ExerciseTotal:
    submitted: int          # learners with a graded submission
    attempts: int
    mean_best: float | None  # over the learners who submitted


@dataclass
class Table:
    lessons: list[LessonColumn]
    exercises: list[ExerciseColumn]
    rows: list[Row]
    lesson_totals: list[LessonTotal] = field(default_factory=list)
    exercise_totals: list[ExerciseTotal] = field(default_factory=list)

    @property
    def questions(self) -> int:
        return sum(len(c.questions) for c in self.lessons)

    @property
    def max_score(self) -> int:
        return sum(c.max_score for c in self.exercises)


def build_table(learners: Sequence[Any], progress: Iterable[Any], graded: Iterable[Any],
                lessons: list[LessonColumn], exercises: list[ExerciseColumn]) -> Table:
    """The cohort's table from rows already read: `progress` LessonProgress rows, `graded` graded
    Submission rows (oldest first) of the learners' owner keys."""
    by_owner = _progress_by_owner(progress)
    subs: dict[tuple[str, str], list[Any]] = {}
    for s in graded:
        subs.setdefault((s.visitor, s.exercise), []).append(s)
    rows = []
    for learner in learners:
        key = user_key(learner)
        mine = by_owner.get(key, {})
        rows.append(Row(learner, [lesson_cell(c, mine.get(c.slug)) for c in lessons],
                        [exercise_cell(c, subs.get((key, c.slug), [])) for c in exercises]))
    return Table(lessons, exercises, rows, _lesson_totals(rows, len(lessons)), _exercise_totals(rows, len(exercises)))


def _progress_by_owner(progress: Iterable[Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for p in progress:
        out.setdefault(p.owner, {})[p.slug] = p
    return out


def _lesson_totals(rows: list[Row], n: int) -> list[LessonTotal]:
    return [LessonTotal(sum(1 for r in rows if r.lessons[i].started), sum(1 for r in rows if r.lessons[i].finished),
                        sum(r.lessons[i].right for r in rows), sum(r.lessons[i].answered for r in rows))
            for i in range(n)]


def _exercise_totals(rows: list[Row], n: int) -> list[ExerciseTotal]:
    totals = []
    for i in range(n):
        bests = [r.exercises[i].best for r in rows if r.exercises[i].best is not None]
        totals.append(ExerciseTotal(len(bests), sum(r.exercises[i].attempts for r in rows),
                                    round(sum(bests) / len(bests), 1) if bests else None))
    return totals


# -- what to explain again ---------------------------------------------------------------------
@dataclass(frozen=True)
class Trouble:
    """A question most of those who answered got wrong at first try."""
    beat: str
    index: int           # the beat's 0-based index in the lesson
    text: str            # the question, plain, in the page's language
    wrong: int
    answers: int         # answers with a verdict

    @property
    def percent(self) -> int:
        return round(100 * self.wrong / self.answers)


@dataclass(frozen=True)
class LessonTroubles:
    slug: str
    order: int
    title: str
    questions: list[Trouble]


def explain_again(lessons: Iterable[Lesson], progress: Iterable[Any], lang: str,
                  min_answers: int = MIN_ANSWERS) -> list[LessonTroubles]:
    """Per lesson, the questions with at least `min_answers` verdicts of which at least half are
    wrong, the worst first; lessons without any are left out."""
    counts: dict[tuple[str, str], list[int]] = {}          # (slug, beat) -> [wrong, answers]
    for p in progress:
        for beat, answer in (p.answers or {}).items():
            if isinstance(answer, dict) and isinstance(answer.get("right"), bool):
                tally = counts.setdefault((p.slug, beat), [0, 0])
                tally[0] += not answer["right"]
                tally[1] += 1
    out = []
    for lesson in lessons:
        prose = lesson.prose[lang]
        found = []
        for beat in lesson.questions:
            wrong, answers = counts.get((lesson.slug, beat.id), (0, 0))
            if answers >= min_answers and wrong >= WRONG_SHARE * answers:
                found.append(Trouble(beat.id, beat.index, text.plain(prose.get(f"{beat.id}/question")), wrong, answers))
        if found:
            found.sort(key=lambda t: (-t.wrong / t.answers, t.index))
            out.append(LessonTroubles(lesson.slug, lesson.order, lesson.title(lang), found))
    return out


# -- one learner, beat by beat -----------------------------------------------------------------
@dataclass(frozen=True)
class BeatLine:
    index: int
    id: str
    seen: bool
    question: str          # "" for a beat without a question
    first: str | None      # the first answer as shown, None if not answered
    right: bool | None     # None: no verdict (not answered, or not revealed yet)


@dataclass(frozen=True)
class LearnerLesson:
    slug: str
    order: int
    title: str
    cell: LessonCell
    beats: list[BeatLine]


def learner_lessons(lessons: Iterable[Lesson], progress: Iterable[Any], lang: str) -> list[LearnerLesson]:
    """The lessons a learner has started, beat by beat, in course order."""
    mine = {p.slug: p for p in progress}
    out = []
    for lesson in lessons:
        p = mine.get(lesson.slug)
        if p is None:
            continue
        column = lesson_columns([lesson], lang)[0]
        out.append(LearnerLesson(lesson.slug, lesson.order, column.title, lesson_cell(column, p),
                                 [_beat_line(lesson, beat, p, lang) for beat in lesson.beats]))
    return out


def _beat_line(lesson: Lesson, beat: Any, progress: Any, lang: str) -> BeatLine:
    prose = lesson.prose[lang]
    answer = (progress.answers or {}).get(beat.id) if beat.question is not None else None
    first = None
    if isinstance(answer, dict) and "first" in answer:
        first = _shown(lesson, beat, answer["first"], lang)
    right = answer.get("right") if isinstance(answer, dict) and isinstance(answer.get("right"), bool) else None
    question = text.plain(prose.get(f"{beat.id}/question")) if beat.question is not None else ""
    return BeatLine(beat.index, beat.id, beat.id in (progress.seen or []), question, first, right)


def _shown(lesson: Lesson, beat: Any, value: Any, lang: str) -> str:
    """A first answer as the learner saw it: a choice by its text in the page's language."""
    from lessons.answers import shown

    if beat.question.kind == "choice" and isinstance(value, str):
        choice = text.plain(lesson.prose[lang].get(f"{beat.id}/choice:{value}"))
        if choice:
            return choice
    return shown(value)


# -- the queries -------------------------------------------------------------------------------
PROGRESS_FIELDS = ("id", "owner", "slug", "seen", "answers", "finished")
SUBMISSION_FIELDS = ("id", "visitor", "exercise", "score", "max_score", "submitted_at")


def progress_of(keys: Iterable[str]) -> Any:
    """The LessonProgress rows of these owner keys (one query when iterated)."""
    return LessonProgress.objects.filter(owner__in=list(keys)).only(*PROGRESS_FIELDS).order_by()


def graded_of(keys: Iterable[str]) -> Any:
    """The graded submissions of these visitor keys, oldest first, without their notebooks."""
    return (Submission.objects.filter(visitor__in=list(keys), status=Submission.GRADED)
            .only(*SUBMISSION_FIELDS).order_by("submitted_at", "id"))


def cohort_table(learners: Sequence[Any], lang: str) -> tuple[Table, list[Any]]:
    """The table of these learners and the progress rows it was built from (for explain_again)."""
    keys = [user_key(u) for u in learners]
    progress = list(progress_of(keys))
    table = build_table(learners, progress, graded_of(keys), lesson_columns(catalog.lessons(), lang),
                        exercise_columns())
    return table, progress
