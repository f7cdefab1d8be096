"""Signing up or in keeps what the browser made anonymously: lab sessions, lesson progress and
notebook submissions move to the account ("user:<pk>"), and the visitor is told what was kept."""
from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from pytest_django.fixtures import Settings

from classroom.views_accounts import kept_message
from lab.models import LabSession
from lab.owners import user_key
from lessons.models import LessonProgress
from spark_exercises.models import Submission, visitor_learner
from tests.classroom.accounts_helpers import PASSWORD, fast_passwords, fresh_counts, learner  # noqa: F401

pytestmark = pytest.mark.django_db
LESSON = "topics-partitions-brokers"


@pytest.fixture(autouse=True)
def lab_dir(settings: Settings, tmp_path: Path) -> None:
    settings.KAFKA_LAB_DATA_DIR = tmp_path / "labs"


def anonymous_work(client: Client) -> str:
    """A lab session, a lesson's progress (and the lesson's own lab session) and a submission,
    made the way an anonymous visitor makes them; returns their session key."""
    made = client.post("/lab/new", {"name": "before signing up", "brokers": 3, "seed": 1,
                                    "truncation": "leader-epoch", "config": ""})
    assert made.status_code == 302
    assert client.get(f"/lessons/{LESSON}/").status_code == 200
    key = client.session.session_key
    Submission.objects.create(learner=visitor_learner(key), visitor=visitor_learner(key), exercise="05-compacted-view")
    assert LabSession.objects.filter(owner=key).count() == 2 and LessonProgress.objects.filter(owner=key).count() == 1
    return key


def test_signing_up_keeps_the_anonymous_visitors_work(client: Client) -> None:
    key = anonymous_work(client)
    response = client.post("/accounts/signup/", {"username": "newbie", "password1": PASSWORD, "password2": PASSWORD})
    assert response.status_code == 302
    owner = user_key(get_user_model().objects.get(username="newbie"))
    assert client.session.session_key != key, "login() rotated the session key"
    assert LabSession.objects.filter(owner=owner).count() == 2 and not LabSession.objects.filter(owner=key).exists()
    assert LessonProgress.objects.get().owner == owner
    submission = Submission.objects.get()
    assert (submission.visitor, submission.learner) == (owner, "newbie")
    home = client.get("/").content.decode()
    assert "2 lab sessions, 1 lesson, 1 submission are now in your account." in home
    assert "before signing up" in client.get("/lab/sessions").content.decode()


def test_signing_in_keeps_it_too_and_the_further_lesson_progress_wins(client: Client) -> None:
    lea = learner()
    owner = user_key(lea)
    LessonProgress.objects.create(owner=owner, slug=LESSON, beat=4, seen=["a", "b", "c", "d"])
    key = anonymous_work(client)        # beat 0 here: behind the account's progress
    response = client.post("/accounts/login/", {"username": "lea", "password": PASSWORD})
    assert response.status_code == 302
    assert LabSession.objects.filter(owner=owner).count() == 2 and not LabSession.objects.filter(owner=key).exists()
    progress = LessonProgress.objects.get()
    assert (progress.owner, progress.beat) == (owner, 4), "the account's further progress stays"
    assert "2 lab sessions, 1 submission are now in your account." in client.get("/").content.decode()


def test_anonymous_progress_further_along_replaces_the_accounts(client: Client) -> None:
    lea = learner()
    owner = user_key(lea)
    LessonProgress.objects.create(owner=owner, slug=LESSON, beat=1)
    anonymous_work(client)
    LessonProgress.objects.exclude(owner=owner).update(beat=5, finished=True)
    client.post("/accounts/login/", {"username": "lea", "password": PASSWORD})
    progress = LessonProgress.objects.get()
    assert (progress.owner, progress.beat, progress.finished) == (owner, 5, True)


def test_a_visitor_with_nothing_made_gets_no_message(client: Client) -> None:
    learner()
    client.post("/accounts/login/", {"username": "lea", "password": PASSWORD})
    assert "now in your account" not in client.get("/").content.decode()


def test_a_failed_sign_in_moves_nothing(client: Client) -> None:
    learner()
    key = anonymous_work(client)
    client.post("/accounts/login/", {"username": "lea", "password": "wrong"})
    assert LabSession.objects.filter(owner=key).count() == 2


def test_the_message_counts_in_words() -> None:
    assert kept_message({"sessions": 3, "lessons": 2, "submissions": 1}) == \
        "3 lab sessions, 2 lessons, 1 submission are now in your account."
    assert kept_message({"sessions": 1, "lessons": 0, "submissions": 0}) == "1 lab session is now in your account."
    assert kept_message({"sessions": 0, "lessons": 0, "submissions": 0}) == ""
