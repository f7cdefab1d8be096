"""Roles are Django groups holding permissions; views ask for permissions, never group names."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group, Permission
from django.core.management import call_command
from django.core.management.base import CommandError

from classroom.roles import ADMIN, INSTRUCTOR, LEARNER, ensure_roles, role_of, set_role
from tests.classroom.accounts_helpers import account, fast_passwords, fresh_counts  # noqa: F401

pytestmark = pytest.mark.django_db


def perms_of(group: str) -> set[str]:
    return {f"{p.content_type.app_label}.{p.codename}" for p in Group.objects.get(name=group).permissions.all()}


def test_migrate_made_the_three_groups_with_their_permissions() -> None:
    assert perms_of(LEARNER) == set()
    assert {"classroom.teach_cohort", "classroom.broadcast_session", "classroom.add_cohort",
            "classroom.change_cohort", "classroom.add_playlist", "classroom.change_playlist"} <= perms_of(INSTRUCTOR)
    assert "classroom.see_every_cohort" not in perms_of(INSTRUCTOR)
    assert "auth.change_user" not in perms_of(INSTRUCTOR)
    assert perms_of(ADMIN) == {f"{p.content_type.app_label}.{p.codename}" for p in Permission.objects.all()}


def test_making_the_roles_again_changes_nothing() -> None:
    before = {g: perms_of(g) for g in (LEARNER, INSTRUCTOR, ADMIN)}
    ensure_roles()
    ensure_roles()
    assert {g: perms_of(g) for g in (LEARNER, INSTRUCTOR, ADMIN)} == before
    assert Group.objects.filter(name__in=[LEARNER, INSTRUCTOR, ADMIN]).count() == 3


def test_every_new_account_starts_as_a_learner() -> None:
    made = get_user_model().objects.create_user("newbie", password="x")
    assert list(made.groups.values_list("name", flat=True)) == [LEARNER]
    assert role_of(made) == LEARNER
    assert not made.has_perm("classroom.teach_cohort")


def test_each_role_holds_its_permissions() -> None:
    learner, instructor, admin = account("l"), account("i", INSTRUCTOR), account("a", ADMIN)
    assert [role_of(u) for u in (learner, instructor, admin)] == [LEARNER, INSTRUCTOR, ADMIN]
    assert not learner.has_perm("classroom.broadcast_session")
    assert instructor.has_perm("classroom.teach_cohort") and instructor.has_perm("classroom.broadcast_session")
    assert not instructor.has_perm("classroom.see_every_cohort")
    assert admin.has_perm("classroom.see_every_cohort") and admin.has_perm("auth.change_user")
    assert admin.is_staff, "an admin may use Django's admin site"


def test_a_role_replaces_the_one_before() -> None:
    user = account("switcher", INSTRUCTOR)
    set_role(user, LEARNER)
    user = get_user_model().objects.get(pk=user.pk)
    assert list(user.groups.values_list("name", flat=True)) == [LEARNER]
    assert not user.has_perm("classroom.teach_cohort")


def test_a_superuser_counts_as_an_admin() -> None:
    root = get_user_model().objects.create_superuser("root", password="x")
    assert role_of(root) == ADMIN
    assert root.has_perm("classroom.see_every_cohort")


def test_grant_role_sets_a_role_from_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    account("lead")
    call_command("grant_role", "lead", "instructor")
    assert "lead is now instructor" in capsys.readouterr().out
    assert get_user_model().objects.get(username="lead").has_perm("classroom.teach_cohort")


def test_grant_role_refuses_an_unknown_account_or_role() -> None:
    account("lead")
    with pytest.raises(CommandError, match="no account named 'nobody'"):
        call_command("grant_role", "nobody", "admin")
    with pytest.raises(CommandError, match="invalid choice"):
        call_command("grant_role", "lead", "emperor")
    with pytest.raises(ValueError, match="unknown role"):
        set_role(get_user_model().objects.get(username="lead"), "emperor")
