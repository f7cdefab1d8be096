"""Grading with several workers (docs/placement.md): a submission is graded once, by the worker
that claims it; a worker starting up fails only the running submissions of dead workers."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from lab import placement
from lab.workers import worker_name
from spark_exercises import views
from spark_exercises.models import Submission
from spark_exercises.startup import recover_interrupted_submissions
from tests.spark.test_gradebook_views import SLUG

pytestmark = pytest.mark.django_db


def test_a_submission_another_worker_claimed_is_not_graded_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    graded: list[int] = []
    monkeypatch.setattr(views, "grade_notebook", lambda *a, **k: graded.append(1))
    taken = Submission.objects.create(learner="ana", exercise=SLUG, status="running", grader="other-1-ab",
                                      notebook="{}")
    views.grade_submission(taken.pk)
    taken.refresh_from_db()
    assert graded == [] and taken.status == "running" and taken.grader == "other-1-ab"


def test_the_claiming_worker_is_recorded_while_it_grades(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, str]] = []

    def grade(*args, **kwargs):
        row = Submission.objects.get(learner="bo")
        seen.append((row.status, row.grader))
        raise views.GradeError("no such exercise")
    monkeypatch.setattr(views, "grade_notebook", grade)
    import nbformat
    queued = Submission.objects.create(learner="bo", exercise=SLUG, status="queued",
                                       notebook=nbformat.writes(nbformat.v4.new_notebook()))
    views.grade_submission(queued.pk)
    assert seen == [("running", worker_name())]
    assert Submission.objects.get(pk=queued.pk).status == "failed"


def test_start_up_fails_only_the_running_submissions_of_dead_workers(settings, monkeypatch) -> None:
    settings.KAFKA_LAB_PLACEMENT = True
    monkeypatch.setattr(views, "GRADING", type("Q", (), {"submit": lambda self, pk: None})())
    now = timezone.now()
    placement.beat("alive-1-aa", "specific.x!1", now)
    placement.beat("dead-2-bb", "specific.y!2", now)
    from lab.models import LabWorker
    LabWorker.objects.filter(name="dead-2-bb").update(heartbeat_at=now - timedelta(minutes=5))
    elsewhere = Submission.objects.create(learner="a", exercise=SLUG, status="running", grader="alive-1-aa")
    orphan = Submission.objects.create(learner="b", exercise=SLUG, status="running", grader="dead-2-bb")
    unnamed = Submission.objects.create(learner="c", exercise=SLUG, status="running")

    recover_interrupted_submissions()

    assert Submission.objects.get(pk=elsewhere.pk).status == "running"
    assert Submission.objects.get(pk=orphan.pk).status == "failed"
    assert Submission.objects.get(pk=unnamed.pk).status == "failed"


def test_with_one_process_every_running_submission_is_failed_at_start_up(settings, monkeypatch) -> None:
    settings.KAFKA_LAB_PLACEMENT = False
    monkeypatch.setattr(views, "GRADING", type("Q", (), {"submit": lambda self, pk: None})())
    placement.beat("alive-1-aa", "specific.x!1", timezone.now())
    row = Submission.objects.create(learner="a", exercise=SLUG, status="running", grader="alive-1-aa")
    recover_interrupted_submissions()
    assert Submission.objects.get(pk=row.pk).status == "failed"
