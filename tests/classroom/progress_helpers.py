"""Rows for the progress tests (tests/classroom/test_progress_*.py), made with the ORM directly:
users, a cohort with its instructor and learners, lesson progress and graded submissions."""
from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.utils import timezone

from classroom.models import Cohort, Membership
from lab.owners import user_key
from lessons.models import LessonProgress
from spark_exercises.models import Submission

LESSON = "topics-partitions-brokers"        # lesson 01: 6 beats, questions create (choice), directories, offsets, one-consumer
BEATS = ["create", "directories", "keyed-records", "alice", "offsets", "one-consumer"]
EXERCISE = "05-compacted-view"


def user(username: str, **fields: Any) -> Any:
    return get_user_model().objects.create_user(username=username, password="pw-not-used", **fields)


def instructor(username: str = "teacher") -> Any:
    u = user(username)
    u.user_permissions.add(Permission.objects.get(codename="teach_cohort"))
    return get_user_model().objects.get(pk=u.pk)      # a fresh object: no stale permission cache


def admin(username: str = "boss") -> Any:
    u = user(username)
    u.user_permissions.add(Permission.objects.get(codename="see_every_cohort"))
    return get_user_model().objects.get(pk=u.pk)


def cohort(name: str, teacher: Any | None, learners: list[Any]) -> Cohort:
    c = Cohort.objects.create(name=name, created_by=teacher)
    if teacher is not None:
        c.instructors.add(teacher)
    Membership.objects.bulk_create([Membership(cohort=c, user=u) for u in learners])
    return c


def progress(learner: Any, slug: str = LESSON, *, seen: list[str] | None = None,
             answers: dict[str, dict] | None = None, finished: bool = False) -> LessonProgress:
    return LessonProgress.objects.create(owner=user_key(learner), slug=slug, seen=seen or [],
                                         answers=answers or {}, finished=finished)


def graded(learner: Any, score: int, *, exercise: str = EXERCISE, max_score: int = 6, minutes_ago: int = 0,
           status: str = Submission.GRADED) -> Submission:
    return Submission.objects.create(learner=learner.get_username(), visitor=user_key(learner), exercise=exercise,
                                     status=status, score=score, max_score=max_score,
                                     submitted_at=timezone.now() - timedelta(minutes=minutes_ago))
