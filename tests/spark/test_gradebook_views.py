"""A learner uploads a notebook and reads its report; the gradebook lists grades per learner and
exports them as CSV.

Grading itself is tested in test_grader.py and test_exercises.py: here `grade_notebook` is a
stand-in that returns a canned report at once, and the grading queue runs inline.
"""
from __future__ import annotations

import csv
import io
import json
import threading
import time

import nbformat
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import include, path

from spark_exercises import views
from spark_exercises.grader.report import QuestionResult, Report
from spark_exercises.models import Submission, visitor_learner

# The routes as the lab mounts them (lab/urls.py includes spark_exercises.urls at the root).
urlpatterns = [path("", include("lab.urls")), path("", include("spark_exercises.urls"))]
pytestmark = [pytest.mark.django_db, pytest.mark.urls(__name__)]

SLUG = "05-compacted-view"


class InlineQueue:
    """Grades at once, in the request's thread."""

    def submit(self, pk: int) -> None:
        views.grade_submission(pk)


class ParkedQueue:
    """A queue whose jobs never run: the submission stays queued."""

    def submit(self, pk: int) -> None:
        pass


def canned_report(nb, exercise) -> Report:
    return Report(exercise, "notebook", questions=[
        QuestionResult("latest", "The latest value of every live key", 3, 3, True, "correct"),
        QuestionResult("deleted-keys", "Keys deleted by a tombstone", 0, 2, False, "1 keys missing"),
    ], error={"kind": "exception", "cell": 4, "message": "KeyError: 'key'",
              "headline": "code cell 4 raised KeyError: 'key'", "detail": ""})


@pytest.fixture(autouse=True)
def inline_grading(monkeypatch: pytest.MonkeyPatch, settings) -> list:
    calls = []

    def fake_grade(nb, exercise, **limits):
        calls.append((nb, exercise))
        return canned_report(nb, exercise)
    monkeypatch.setattr(views, "GRADING", InlineQueue())
    monkeypatch.setattr(views, "grade_notebook", fake_grade)
    settings.SPARK_EXERCISES_GRADE_UPLOADS = True
    return calls


def upload(client: Client, *, exercise: str = "", learner: str = "", metadata: str | None = SLUG,
           content: bytes | None = None):
    if content is None:
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("latest = {}")])
        if metadata:
            nb.metadata["kafka_lab"] = {"exercise": metadata}
        content = nbformat.writes(nb).encode()
    notebook = SimpleUploadedFile("mine.ipynb", content, content_type="application/x-ipynb+json")
    return client.post("/exercises/submit", {"notebook": notebook, "exercise": exercise, "learner": learner})


def test_the_exercise_list_links_every_exercise_and_its_starter(client: Client) -> None:
    html = client.get("/exercises/").content.decode()

    for slug in ("01-partition-routing", "02-consumer-lag", "03-event-time-watermark", "04-unclean-election-loss",
                 "05-compacted-view", "06-checkpoint-restart"):
        assert f'href="/exercises/{slug}/"' in html and f'href="/exercises/{slug}/starter.ipynb"' in html


def test_an_exercise_page_shows_its_readme_and_the_upload_form(client: Client) -> None:
    response = client.get(f"/exercises/{SLUG}/")

    html = response.content.decode()
    assert response.status_code == 200
    assert "A compacted view" in html and "中文摘要" in html
    assert 'enctype="multipart/form-data"' in html and 'name="notebook"' in html
    assert f'<option value="{SLUG}" selected>' in html


def test_learners_download_the_starter_and_scenario_but_never_the_solution_or_checks(client: Client) -> None:
    starter = client.get(f"/exercises/{SLUG}/starter.ipynb")
    scenario = client.get(f"/exercises/{SLUG}/scenario.json")

    assert starter.status_code == 200 and b"# YOUR CODE HERE" in b"".join(starter.streaming_content)
    assert json.loads(b"".join(scenario.streaming_content))["steps"]
    for hidden in ("solution.ipynb", "checks.py", "../06-checkpoint-restart/checks.py"):
        assert client.get(f"/exercises/{SLUG}/{hidden}").status_code == 404
    assert client.get("/exercises/99-nothing/").status_code == 404


def test_an_uploaded_notebook_is_graded_and_its_report_shown(client: Client, inline_grading: list) -> None:
    response = upload(client, learner="ana")

    submission = Submission.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/exercises/submissions/{submission.pk}/"
    assert inline_grading[0][1] == SLUG and inline_grading[0][0].cells[0].source == "latest = {}"
    assert (submission.learner, submission.exercise, submission.status) == ("ana", SLUG, "graded")
    assert (submission.score, submission.max_score, submission.notebook_name) == (3, 5, "mine.ipynb")
    assert submission.questions[1] == {"id": "deleted-keys", "title": "Keys deleted by a tombstone", "points": 0,
                                       "max_points": 2, "ok": False, "feedback": "1 keys missing"}
    html = client.get(response["Location"]).content.decode()
    assert "score: 3/5" in html and "1 keys missing" in html and "code cell 4 raised KeyError" in html
    assert 'http-equiv="refresh"' not in html


def test_an_upload_without_a_name_is_filed_under_the_visitor_not_their_session_key(client: Client) -> None:
    upload(client)

    submission = Submission.objects.get()
    key = client.session.session_key
    assert submission.learner == submission.visitor == visitor_learner(key)
    assert key not in submission.learner
    assert "Your recent submissions" in client.get("/exercises/").content.decode()


def test_the_exercise_chosen_on_the_form_wins_over_the_notebook_s(client: Client, inline_grading: list) -> None:
    upload(client, exercise="01-partition-routing", metadata=SLUG)

    assert Submission.objects.get().exercise == "01-partition-routing"


@pytest.mark.parametrize(("fields", "message"), [
    ({"content": b"{ not a notebook"}, "This is not a Jupyter notebook"),
    ({"metadata": None}, "The notebook does not say which exercise it is"),
    ({"learner": "a/b"}, "No / in a name."),
])
def test_a_bad_upload_is_refused_with_a_form_error(client: Client, fields: dict, message: str) -> None:
    response = upload(client, **fields)

    assert response.status_code == 400 and message in response.content.decode()
    assert Submission.objects.count() == 0


def test_a_submission_being_graded_refreshes_itself(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(views, "GRADING", ParkedQueue())
    response = upload(client)

    html = client.get(response["Location"]).content.decode()
    assert 'http-equiv="refresh"' in html and "Grading… (queued)" in html


def test_a_grader_failure_is_shown_not_left_running(client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(nb, exercise, **limits):
        raise RuntimeError("no java")
    monkeypatch.setattr(views, "grade_notebook", broken)
    response = upload(client)

    submission = Submission.objects.get()
    assert submission.status == "failed" and "RuntimeError: no java" in submission.error
    assert "could not be graded" in client.get(response["Location"]).content.decode()


def test_uploads_are_refused_when_grading_is_off(client: Client, settings) -> None:
    settings.SPARK_EXERCISES_GRADE_UPLOADS = False

    assert upload(client).status_code == 403
    assert "Grading uploaded notebooks is off" in client.get("/exercises/submit").content.decode()
    assert Submission.objects.count() == 0


def _graded(learner: str, exercise: str, score: int, max_score: int = 6) -> Submission:
    return Submission.objects.create(learner=learner, exercise=exercise, status="graded", score=score,
                                     max_score=max_score, questions=[{"id": "q", "points": score}],
                                     notebook_name="n.ipynb")


def test_the_gradebook_shows_each_learner_s_best_score_per_exercise(client: Client) -> None:
    _graded("ana", SLUG, 2)
    _graded("ana", SLUG, 6)
    _graded("ana", "01-partition-routing", 8, 8)
    _graded("bo", SLUG, 1)

    html = client.get("/exercises/gradebook/").content.decode()

    ana = html[html.index('href="/exercises/gradebook/ana/"'):html.index('href="/exercises/gradebook/bo/"')]
    assert "6/6" in ana and "2/6" not in ana and "8/8" in ana and "14/" in ana
    assert 'href="/exercises/gradebook.csv"' in html


def test_a_learner_s_page_lists_all_their_submissions(client: Client) -> None:
    _graded("ana", SLUG, 2)
    _graded("ana", SLUG, 6)
    _graded("bo", SLUG, 1)

    html = client.get("/exercises/gradebook/ana/").content.decode()

    assert html.count("n.ipynb") == 2 and "2/6" in html and "6/6" in html and "1/6" not in html
    assert client.get("/exercises/gradebook/nobody/").status_code == 404


def test_the_csv_export_has_one_row_per_submission(client: Client) -> None:
    _graded("ana", SLUG, 2)
    _graded("bo", "01-partition-routing", 8, 8)

    everyone = list(csv.DictReader(io.StringIO(client.get("/exercises/gradebook.csv").content.decode())))
    ana = list(csv.DictReader(io.StringIO(client.get("/exercises/gradebook.csv?learner=ana").content.decode())))

    assert [(r["learner"], r["exercise"], r["score"], r["max_score"]) for r in everyone] == [
        ("ana", SLUG, "2", "6"), ("bo", "01-partition-routing", "8", "8")]
    assert list(everyone[0]) == views.CSV_FIELDS
    assert json.loads(everyone[0]["questions"]) == [{"id": "q", "points": 2}]
    assert [r["learner"] for r in ana] == ["ana"]


@pytest.mark.django_db(transaction=True)
def test_the_grading_queue_grades_on_its_own_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    threads = []

    def fake_grade(nb, exercise, **limits):
        threads.append(threading.current_thread().name)
        return canned_report(nb, exercise)
    monkeypatch.setattr(views, "grade_notebook", fake_grade)
    nb = nbformat.writes(nbformat.v4.new_notebook())
    submission = Submission.objects.create(learner="ana", exercise=SLUG, notebook=nb)

    views.GradingQueue().submit(submission.pk)

    deadline = time.monotonic() + 10
    while Submission.objects.get(pk=submission.pk).status != "graded" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert Submission.objects.get(pk=submission.pk).score == 3
    assert threads == ["spark-grader"]
