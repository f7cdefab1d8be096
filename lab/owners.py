"""Who owns a lab session, a lesson's progress or a notebook submission: one "owner key".

A signed-in visitor's key is ``user:<pk>``; an anonymous visitor's is their Django session key,
as it always was, so ``make run`` on a laptop needs no account. Every owned row keeps this key in
one column (``LabSession.owner``, ``LessonProgress.owner``, ``Submission.visitor`` — the last one
hashed for anonymous visitors, since a session key is a login secret), so signing up or in is one
rewrite of those columns (``adopt``): the visitor keeps what they made before.

Django's ``login()`` rotates the session key, so the anonymous key must be read *before* it
(``anonymous_key_before_login``) and handed to ``adopt`` after.
"""
from __future__ import annotations

from typing import Any

USER_PREFIX = "user:"


def user_key(user: Any) -> str:
    """The owner key of a signed-in user."""
    return f"{USER_PREFIX}{user.pk}"


def user_pk(owner: str) -> int | None:
    """The user a key belongs to, or None for an anonymous visitor's key."""
    if owner.startswith(USER_PREFIX):
        try:
            return int(owner[len(USER_PREFIX):])
        except ValueError:
            return None
    return None


def owner_key(request: Any, *, create: bool = False) -> str | None:
    """The visitor's owner key; None for an anonymous visitor without a session yet, unless
    `create` (then the session and its cookie are made)."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return user_key(user)
    if create:
        request.session["lab_visitor"] = True
        if not request.session.session_key:
            request.session.save()
    return request.session.session_key or None


def scope_owner(scope: dict[str, Any]) -> str | None:
    """The owner key of a WebSocket's visitor (Channels' AuthMiddlewareStack filled the scope)."""
    user = scope.get("user")
    if user is not None and getattr(user, "is_authenticated", False):
        return user_key(user)
    session = scope.get("session")
    return getattr(session, "session_key", None) or None


def anonymous_key_before_login(request: Any) -> str | None:
    """Read before ``login()``: the anonymous visitor's key that ``adopt`` hands over."""
    user = getattr(request, "user", None)
    if user is not None and user.is_authenticated:
        return None
    return request.session.session_key or None


def adopt(anonymous_key: str | None, user: Any) -> dict[str, int]:
    """Give `user` everything the anonymous visitor `anonymous_key` owned: lab sessions, lesson
    progress (where the user already has progress in a lesson, the one further along stays) and
    notebook submissions. Returns how many rows of each moved."""
    from django.db import transaction

    from lab.models import LabSession
    from lessons.models import LessonProgress
    from spark_exercises.models import Submission, visitor_learner

    moved = {"sessions": 0, "lessons": 0, "submissions": 0}
    if not anonymous_key or user_pk(anonymous_key) is not None:
        return moved
    key = user_key(user)
    with transaction.atomic():
        moved["sessions"] = LabSession.objects.filter(owner=anonymous_key).update(owner=key)
        for progress in LessonProgress.objects.filter(owner=anonymous_key):
            mine = LessonProgress.objects.filter(owner=key, slug=progress.slug).first()
            if mine is None:
                progress.owner = key
                progress.save(update_fields=["owner"])
                moved["lessons"] += 1
            elif _further(progress, mine):
                mine.delete()
                progress.owner = key
                progress.save(update_fields=["owner"])
                moved["lessons"] += 1
            else:
                progress.delete()
        hashed = visitor_learner(anonymous_key)
        moved["submissions"] = Submission.objects.filter(visitor=hashed).update(visitor=key)
        Submission.objects.filter(visitor=key, learner=hashed).update(learner=user.get_username())
    return moved


def _further(a: Any, b: Any) -> bool:
    return (a.finished, len(a.seen or []), a.beat) > (b.finished, len(b.seen or []), b.beat)


def submission_visitor(request: Any, *, create: bool = False) -> str:
    """`Submission.visitor` of this visitor: ``user:<pk>`` when signed in, else the hash of the
    session key (spark_exercises.models.visitor_learner); "" for an anonymous visitor without a
    session (unless `create`)."""
    from spark_exercises.models import visitor_learner

    key = owner_key(request, create=create)
    if key is None:
        return ""
    return key if user_pk(key) is not None else visitor_learner(key)
