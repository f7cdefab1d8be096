"""Roles: Django groups holding permissions, and the one decorator views use to ask for one.

Three groups, made (and kept in step) after every `migrate` by `ensure_roles`:

- ``learner``: nothing special — every new account is put in it;
- ``instructor``: classroom.teach_cohort, classroom.broadcast_session and the model permissions
  to add/change/view cohorts and playlists;
- ``admin``: every permission there is (classroom.see_every_cohort included).

A superuser counts as an admin (Django answers every has_perm with True for them). Views ask
for *permissions* (`require_perm`, `user.has_perm`), never for a group's name: the names live in
this module only, for `set_role` and `role_of`.
"""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import Group, Permission
from django.contrib.auth.views import redirect_to_login
from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext_lazy as _

LEARNER, INSTRUCTOR, ADMIN = "learner", "instructor", "admin"
ROLES = (LEARNER, INSTRUCTOR, ADMIN)
ROLE_LABELS = {LEARNER: _("learner"), INSTRUCTOR: _("instructor"), ADMIN: _("admin")}

TEACH = "classroom.teach_cohort"
BROADCAST = "classroom.broadcast_session"
SEE_ALL = "classroom.see_every_cohort"
# Granting a role is changing a user's groups: Django's own permission for that.
MANAGE_USERS = "auth.change_user"

INSTRUCTOR_PERMISSIONS = (
    TEACH, BROADCAST,
    "classroom.add_cohort", "classroom.change_cohort", "classroom.view_cohort",
    "classroom.add_playlist", "classroom.change_playlist", "classroom.delete_playlist",
    "classroom.view_playlist",
)


def _permissions(names: tuple[str, ...]) -> list[Permission]:
    query = Q()
    for name in names:
        app_label, codename = name.split(".", 1)
        query |= Q(content_type__app_label=app_label, codename=codename)
    found = list(Permission.objects.filter(query))
    if len(found) != len(names):   # a renamed permission must not leave instructors silently short
        missing = set(names) - {f"{p.content_type.app_label}.{p.codename}" for p in found}
        raise LookupError(f"permissions missing for the instructor role: {sorted(missing)}")
    return found


def ensure_roles(**_kwargs: Any) -> None:
    """Make the three groups and set their permissions (idempotent). Connected to post_migrate by
    ClassroomConfig.ready, so a fresh database, a test database and a `flush` all have them."""
    from django.apps import apps
    from django.contrib.auth.management import create_permissions

    for app_config in apps.get_app_configs():   # the permissions must exist before they are granted
        create_permissions(app_config, verbosity=0)
    Group.objects.get_or_create(name=LEARNER)
    Group.objects.get_or_create(name=INSTRUCTOR)[0].permissions.set(_permissions(INSTRUCTOR_PERMISSIONS))
    Group.objects.get_or_create(name=ADMIN)[0].permissions.set(Permission.objects.all())


def role_of(user: Any) -> str:
    """The highest role `user`'s permissions amount to."""
    if user.is_superuser or user.has_perm(SEE_ALL):
        return ADMIN
    if user.has_perm(TEACH):
        return INSTRUCTOR
    return LEARNER


def set_role(user: Any, role: str) -> None:
    """Put `user` in exactly one of the role groups (other groups stay). An admin is also staff,
    so that Django's admin site lets them in."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}: one of {', '.join(ROLES)}")
    ensure_groups = {name: Group.objects.get_or_create(name=name)[0] for name in ROLES}
    user.groups.remove(*[g for name, g in ensure_groups.items() if name != role])
    user.groups.add(ensure_groups[role])
    if role == ADMIN and not user.is_staff:
        user.is_staff = True
        user.save(update_fields=["is_staff"])
    for cache in ("_perm_cache", "_user_perm_cache", "_group_perm_cache"):   # has_perm asks afresh
        user.__dict__.pop(cache, None)


def forbidden(request: HttpRequest, reason: str) -> HttpResponse:
    """The classroom's 403 page: says what the visitor lacks, not a bare 'Forbidden'."""
    return render(request, "classroom/forbidden.html", {"reason": reason}, status=403)


def require_perm(perm: str, reason: str) -> Callable[[Callable[..., HttpResponse]], Callable[..., HttpResponse]]:
    """A view for accounts holding `perm`: an anonymous visitor is sent to sign in (and back), a
    signed-in one without it gets the 403 page saying `reason`."""
    def decorator(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
        @functools.wraps(view)
        def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not request.user.has_perm(perm):
                return forbidden(request, str(reason))
            return view(request, *args, **kwargs)
        return wrapped
    return decorator
