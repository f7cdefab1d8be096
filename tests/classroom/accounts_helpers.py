"""Accounts for the accounts, cohorts and roles tests: real users in the real role groups
(classroom.roles.set_role), signed in through the real sign-in page or Django's force_login."""
from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client

from classroom.models import Cohort, Membership
from classroom.roles import ADMIN, INSTRUCTOR, LEARNER, set_role

PASSWORD = "a-Long-passw0rd!"


def account(username: str, role: str = LEARNER, **fields: Any) -> Any:
    user = get_user_model().objects.create_user(username=username, password=PASSWORD, **fields)
    set_role(user, role)
    return get_user_model().objects.get(pk=user.pk)    # a fresh object: no stale permission cache


def learner(username: str = "lea") -> Any:
    return account(username, LEARNER)


def instructor(username: str = "ines") -> Any:
    return account(username, INSTRUCTOR)


def admin(username: str = "ada") -> Any:
    return account(username, ADMIN)


def cohort(name: str = "Kafka 101", teacher: Any | None = None, learners: tuple[Any, ...] = (), **fields: Any) -> Cohort:
    c = Cohort.objects.create(name=name, created_by=teacher, **fields)
    if teacher is not None:
        c.instructors.add(teacher)
    for u in learners:
        Membership.objects.create(cohort=c, user=u)
    return c


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture(autouse=True)
def fresh_counts() -> None:
    """The failure counts (classroom.throttle) live in the cache: each test starts from none."""
    cache.clear()


@pytest.fixture(autouse=True)
def fast_passwords(settings: Any) -> None:
    """A cheap hasher: the tests check who may sign in, not PBKDF2's cost."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
