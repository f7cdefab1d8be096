"""The gradebook on a shared server: a name belongs to the visitor who first used it, a report is
its owner's alone, the CSV export carries no live formulas, an oversized notebook is refused
before it is queued, uploads get their own time limit, and submissions a restart interrupted are
recovered at start-up.

Grading itself is replaced by a canned report here, as in test_gradebook_views.py.
"""
from __future__ import annotations

import csv
import io

import nbformat
import pytest
from django.test import Client

from spark_exercises import views
from spark_exercises.models import Submission
from tests.spark.test_gradebook_views import SLUG, InlineQueue, canned_report, upload

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.spark.test_gradebook_views")]


class RecordingQueue:
    def __init__(self) -> None:
        self.jobs: list[int] = []

    def submit(self, pk: int) -> None:
        self.jobs.append(pk)


@pytest.fixture(autouse=True)
def canned_grading(monkeypatch: pytest.MonkeyPatch, settings) -> list:
    calls = []

    def fake_grade(nb, exercise, **limits):
        calls.append(limits)
        return canned_report(nb, exercise)
    monkeypatch.setattr(views, "GRADING", InlineQueue())
    monkeypatch.setattr(views, "grade_notebook", fake_grade)
    settings.SPARK_EXERCISES_GRADE_UPLOADS = True
    return calls


def test_a_name_taken_by_another_visitor_is_refused() -> None:
    ana, mallory = Client(), Client()
    assert upload(ana, learner="ana").status_code == 302

    response = upload(mallory, learner="ana")

    assert response.status_code == 400 and "another visitor" in response.content.decode()
    assert upload(ana, learner="ana").status_code == 302           # ana may keep using her name
    assert Submission.objects.filter(learner="ana").count() == 2


def test_a_submission_is_readable_only_by_its_owner() -> None:
    ana, bo = Client(), Client()
    location = upload(ana, learner="ana")["Location"]

    assert ana.get(location).status_code == 200
    assert bo.get(location).status_code == 404
    assert Client().get(location).status_code == 404


@pytest.mark.parametrize("name", ["=HYPERLINK(\"http://evil.example\",\"x\")", "+1+1", "-2+3", "@SUM(A1)",
                                  "\tcmd", "\rcmd"])
def test_the_csv_export_neutralises_formulas(name: str) -> None:
    Submission.objects.create(learner=name, exercise=SLUG, status="graded", notebook_name=name, error=name)

    rows = list(csv.reader(io.StringIO(Client().get("/exercises/gradebook.csv").content.decode())))

    learner, notebook, error = rows[1][0], rows[1][7], rows[1][8]
    assert learner == notebook == error == "'" + name


def test_a_notebook_with_too_many_cells_is_refused_before_it_is_queued(monkeypatch: pytest.MonkeyPatch) -> None:
    queue = RecordingQueue()
    monkeypatch.setattr(views, "GRADING", queue)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1") for _ in range(2_000)])
    nb.metadata["kafka_lab"] = {"exercise": SLUG}

    response = upload(Client(), content=nbformat.writes(nb).encode())

    assert response.status_code == 400 and "code cells" in response.content.decode()
    assert queue.jobs == [] and Submission.objects.count() == 0


def test_an_upload_is_graded_with_the_upload_time_limits(settings, canned_grading: list) -> None:
    settings.SPARK_EXERCISES_CELL_TIMEOUT_S = 11
    settings.SPARK_EXERCISES_NOTEBOOK_TIMEOUT_S = 42

    upload(Client(), learner="ana")

    assert canned_grading == [{"cell_timeout": 11, "total_timeout": 42}]


def test_submissions_a_restart_interrupted_are_recovered_at_start_up(monkeypatch: pytest.MonkeyPatch) -> None:
    from spark_exercises.startup import recover_interrupted_submissions
    queue = RecordingQueue()
    monkeypatch.setattr(views, "GRADING", queue)
    queued = Submission.objects.create(learner="ana", exercise=SLUG, status="queued", notebook="{}")
    running = Submission.objects.create(learner="bo", exercise=SLUG, status="running", notebook="{}")
    graded = Submission.objects.create(learner="cy", exercise=SLUG, status="graded")

    recover_interrupted_submissions()

    running.refresh_from_db()
    assert queue.jobs == [queued.pk]
    assert running.status == "failed" and "restarted" in running.error
    assert Submission.objects.get(pk=graded.pk).status == "graded"
