"""Who may see whose items: the one place views ask (classroom.models has the roles' permissions).

- Everyone sees their own items (their owner key, lab.owners).
- An instructor (permission classroom.teach_cohort) sees the items of the learners of the cohorts
  they teach, nobody else's.
- An admin (classroom.see_every_cohort, or a superuser) sees every cohort.
"""
from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import QuerySet

from classroom.models import Cohort, Membership
from lab.owners import user_key, user_pk

TEACH = "classroom.teach_cohort"
BROADCAST = "classroom.broadcast_session"
SEE_ALL = "classroom.see_every_cohort"


def is_instructor(user: Any) -> bool:
    return bool(user is not None and user.is_authenticated and user.has_perm(TEACH))


def cohorts_visible_to(user: Any) -> QuerySet[Cohort]:
    """The cohorts whose learners' progress `user` may see."""
    if user is None or not user.is_authenticated:
        return Cohort.objects.none()
    if user.has_perm(SEE_ALL):
        return Cohort.objects.all()
    if user.has_perm(TEACH):
        return Cohort.objects.filter(instructors=user)
    return Cohort.objects.none()


def learners_of(cohort: Cohort) -> QuerySet[Any]:
    return get_user_model().objects.filter(memberships__cohort=cohort).order_by("username")


def can_see_user(viewer: Any, learner: Any) -> bool:
    """`viewer` may see `learner`'s items: their own, or a learner of a cohort `viewer` sees."""
    if viewer is None or not viewer.is_authenticated:
        return False
    if viewer.pk == learner.pk:
        return True
    return Membership.objects.filter(user=learner, cohort__in=cohorts_visible_to(viewer)).exists()


def can_see_owner(viewer: Any, owner: str) -> bool:
    """The same for an owner key (an anonymous visitor's items are theirs alone)."""
    pk = user_pk(owner)
    if pk is None or viewer is None or not viewer.is_authenticated:
        return False
    if user_key(viewer) == owner:
        return True
    learner = get_user_model().objects.filter(pk=pk).first()
    return learner is not None and can_see_user(viewer, learner)
