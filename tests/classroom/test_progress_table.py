"""An instructor reads their cohort's table: learners × lessons and Spark exercises, with the
numbers the learners' rows hold, sort values for every cell, totals, and what to explain again."""
from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.urls import reverse

from classroom import progress as table_of
from lessons import catalog
from tests.classroom.progress_helpers import BEATS, EXERCISE, LESSON, cohort, graded, instructor, progress, user

pytestmark = pytest.mark.django_db


class Cells(HTMLParser):
    """The table's cells: {learner pk: [attrs of each th/td in the row]}, the headings' attrs, and
    the 'explain again' items' attrs."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, list[dict]] = {}
        self.headings: list[dict] = []
        self.troubles: list[dict] = []
        self._row: str | None = None
        self._in_head = False

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if tag == "thead":
            self._in_head = True
        elif tag == "tr" and "data-learner" in a:
            self._row = a["data-learner"]
            self.rows[self._row] = []
        elif tag in ("td", "th") and self._row is not None:
            self.rows[self._row].append(a)
        elif tag == "th" and self._in_head:
            self.headings.append(a)
        elif tag == "li" and "data-question" in a:
            self.troubles.append(a)

    def handle_endtag(self, tag: str) -> None:
        if tag == "thead":
            self._in_head = False
        elif tag == "tr":
            self._row = None


@pytest.fixture
def classroom():
    teacher = instructor()
    ann, bob, cat = user("ann", first_name="Ann", last_name="Lee"), user("bob"), user("cat")
    group = cohort("Kafka 101", teacher, [ann, bob, cat])
    progress(ann, seen=BEATS, finished=True, answers={
        "create": {"first": "five", "right": True}, "directories": {"first": 10, "right": True},
        "offsets": {"first": 2, "right": False}, "one-consumer": {"first": 1, "right": True}})
    # bob: a beat id the lesson no longer has is not counted; an answer never revealed has no verdict
    progress(bob, seen=["create", "directories", "gone-beat"], answers={
        "create": {"first": "six", "right": False}, "directories": {"first": 3}, "gone-beat": {"first": 1, "right": True}})
    graded(ann, 3, minutes_ago=10)
    first_five = graded(ann, 5, minutes_ago=5)
    latest_five = graded(ann, 5, minutes_ago=1)
    graded(ann, 6, minutes_ago=0, status="failed")          # not graded: neither best nor an attempt
    graded(ann, 8, exercise="01-partition-routing", max_score=8)
    graded(bob, 0, status="queued")
    stranger = user("dan")
    progress(stranger, finished=True, seen=BEATS)
    graded(stranger, 6)
    return {"teacher": teacher, "ann": ann, "bob": bob, "cat": cat, "cohort": group,
            "first_five": first_five, "latest_five": latest_five}


def test_the_table_counts_beats_first_answers_and_finished_lessons(classroom):
    learners = [classroom[n] for n in ("ann", "bob", "cat")]
    table, _rows = table_of.cohort_table(learners, "en")
    col = [c.slug for c in table.lessons].index(LESSON)
    ann, bob, cat = (r.lessons[col] for r in table.rows)
    assert (ann.seen, ann.beats, ann.right, ann.answered, ann.questions, ann.finished) == (6, 6, 3, 4, 4, True)
    assert (bob.seen, bob.beats, bob.right, bob.answered, bob.questions, bob.finished) == (2, 6, 0, 2, 4, False)
    assert (cat.started, cat.seen, cat.answered) == (False, 0, 0)
    assert len(table.lessons) == len(catalog.lessons())
    total = table.lesson_totals[col]
    assert (total.started, total.finished, total.right, total.answered) == (2, 1, 3, 6)


def test_an_exercise_shows_the_gradebooks_best_score_and_the_graded_attempts(classroom):
    table, _rows = table_of.cohort_table([classroom["ann"], classroom["bob"]], "en")
    col = [e.slug for e in table.exercises].index(EXERCISE)
    ann, bob = table.rows[0].exercises[col], table.rows[1].exercises[col]
    assert (ann.best, ann.max_score, ann.attempts) == (5, 6, 3)
    assert ann.best_pk == classroom["latest_five"].pk         # a tie: the latest, as the gradebook
    assert (bob.best, bob.attempts) == (None, 0)               # queued is not graded
    assert table.rows[0].score == 5 + 8
    assert table.exercise_totals[col].submitted == 1 and table.exercise_totals[col].mean_best == 5.0


def test_the_page_gives_every_cell_a_sort_value(client, classroom):
    client.force_login(classroom["teacher"])
    response = client.get(reverse("classroom:cohort_progress", args=[classroom["cohort"].pk]))
    assert response.status_code == 200
    cells = Cells()
    cells.feed(response.content.decode())
    lessons = [c.slug for c in table_of.lesson_columns(catalog.lessons(), "en")]
    exercises = [e.slug for e in table_of.exercise_columns()]
    assert [h.get("data-sort-type") for h in cells.headings] == ["text"] + ["number"] * (len(lessons) + len(exercises) + 3)
    assert cells.headings[0]["aria-sort"] == "ascending"
    ann = cells.rows[str(classroom["ann"].pk)]
    bob = cells.rows[str(classroom["bob"].pk)]
    cat = cells.rows[str(classroom["cat"].pk)]
    assert len(ann) == 1 + len(lessons) + len(exercises) + 3
    assert ann[0]["data-sort-value"] == "ann lee" and cat[0]["data-sort-value"] == "cat"
    lesson = 1 + lessons.index(LESSON)
    assert ann[lesson]["data-sort-value"] == "1 3 6 1"        # finished, right, seen, started
    assert bob[lesson]["data-sort-value"] == "0 0 2 1"
    assert cat[lesson]["data-sort-value"] == "0 0 0 0"
    exercise = 1 + len(lessons) + exercises.index(EXERCISE)
    assert ann[exercise]["data-sort-value"] == "5 3" and bob[exercise]["data-sort-value"] == "-1 0"
    assert [c["data-sort-value"] for c in ann[-3:]] == ["1", "3 4", "13"]
    assert str(classroom["bob"].pk) in cells.rows and len(cells.rows) == 3   # no stranger
    assert 'src="/static/js/progress-table.js"' in response.content.decode()


def test_explain_again_lists_the_questions_half_got_wrong(client, classroom):
    for i in range(3):
        extra = user(f"eve{i}")
        classroom["cohort"].memberships.create(user=extra)
        progress(extra, answers={"offsets": {"first": 9, "right": False},
                                 "directories": {"first": 10, "right": i == 0}})
    # offsets: 4 wrong of 4; directories: 2 wrong of 4 (50 %: in); create: 1 of 2 (too few answers)
    client.force_login(classroom["teacher"])
    url = reverse("classroom:cohort_progress", args=[classroom["cohort"].pk])
    cells = Cells()
    cells.feed(client.get(url).content.decode())
    assert [(t["data-question"], t["data-wrong"], t["data-answers"]) for t in cells.troubles] == [
        (f"{LESSON}/offsets", "4", "4"), (f"{LESSON}/directories", "2", "4")]
    cells = Cells()
    cells.feed(client.get(url + "?min=5").content.decode())
    assert cells.troubles == []
    cells = Cells()
    cells.feed(client.get(url + "?min=2").content.decode())
    assert f"{LESSON}/create" in [t["data-question"] for t in cells.troubles]


def test_explain_again_reads_the_question_in_the_pages_language(client, classroom):
    lesson = catalog.by_slug(LESSON)
    for i in range(3):
        extra = user(f"zed{i}")
        classroom["cohort"].memberships.create(user=extra)
        progress(extra, answers={"directories": {"first": 1, "right": False}})
    client.force_login(classroom["teacher"])
    url = reverse("classroom:cohort_progress", args=[classroom["cohort"].pk])
    zh = client.get(url, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    en = client.get(url, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert "5 个分区、副本因子 2" in lesson.prose["zh"].get("directories/question")
    assert "5 个分区、副本因子 2" in zh and "5 个分区、副本因子 2" not in en
    assert lesson.prose["en"].get("directories/question").split()[0] in en


@pytest.mark.parametrize("bad", ["0", "-1", "x", "1.5", "99999999", "１"])
def test_a_bad_minimum_of_answers_is_a_400(client, classroom, bad):
    client.force_login(classroom["teacher"])
    response = client.get(reverse("classroom:cohort_progress", args=[classroom["cohort"].pk]), {"min": bad})
    assert response.status_code == 400
    assert b"min must be a whole number" in response.content


def test_two_hundred_learners_cost_one_query_per_kind_of_row(client, django_assert_max_num_queries):
    from django.contrib.auth import get_user_model

    from lab.owners import user_key
    from lessons.models import LessonProgress
    from spark_exercises.models import Submission
    teacher = instructor()
    users = get_user_model().objects.bulk_create([get_user_model()(username=f"l{i:03d}") for i in range(200)])
    users = list(get_user_model().objects.filter(username__startswith="l"))
    group = cohort("Big", teacher, users)
    LessonProgress.objects.bulk_create([LessonProgress(owner=user_key(u), slug=s, seen=BEATS[:2],
                                                       answers={"create": {"first": "five", "right": True}})
                                        for u in users for s in (LESSON, "the-notes-commands")])
    Submission.objects.bulk_create([Submission(learner=u.username, visitor=user_key(u), exercise=EXERCISE,
                                               status="graded", score=i % 7, max_score=6)
                                    for i, u in enumerate(users) for _ in range(2)])
    client.force_login(teacher)
    url = reverse("classroom:cohort_progress", args=[group.pk])
    # session, user, the two permission reads, the cohort, learners, progress, submissions: 8 —
    # whatever the number of learners (a query per learner would be 200 more).
    with django_assert_max_num_queries(10):
        response = client.get(url)
    assert response.status_code == 200
    assert response.content.decode().count("data-learner=") == 200
    with django_assert_max_num_queries(10):
        assert client.get(reverse("classroom:cohort_progress_csv", args=[group.pk])).status_code == 200
