"""Admins manage accounts, roles and cohorts in Django's admin; `createsuperuser` makes one."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from classroom.models import Cohort, Invitation
from classroom.roles import ADMIN, LEARNER, role_of
from tests.classroom.accounts_helpers import admin, cohort, fast_passwords, fresh_counts, instructor, learner, signed_in  # noqa: F401

pytestmark = pytest.mark.django_db
PAGES = ["cohort", "membership", "invitation", "broadcast", "playlist"]


def test_createsuperuser_makes_an_admin() -> None:
    call_command("createsuperuser", interactive=False, username="root", email="root@example.org", verbosity=0)
    root = get_user_model().objects.get(username="root")
    assert role_of(root) == ADMIN
    assert list(root.groups.values_list("name", flat=True)) == [LEARNER]


@pytest.mark.parametrize("model", PAGES)
def test_a_superuser_opens_the_classroom_admin_pages(model: str) -> None:
    c = cohort(teacher=instructor(), learners=(learner(),))
    root = get_user_model().objects.create_superuser("root", password="x")
    client = signed_in(root)
    assert client.get(f"/admin/classroom/{model}/").status_code == 200
    assert client.get(f"/admin/classroom/{model}/add/").status_code == 200
    if model == "cohort":
        page = client.get(f"/admin/classroom/cohort/{c.pk}/change/").content.decode()
        assert "lea" in page and c.code in page


def test_an_admin_by_role_reaches_the_admin_site_and_a_learner_does_not() -> None:
    assert signed_in(admin()).get("/admin/classroom/cohort/").status_code == 200
    assert signed_in(learner()).get("/admin/classroom/cohort/").status_code == 302


def test_an_admin_makes_an_invitation_in_the_admin_site() -> None:
    client = signed_in(admin())
    response = client.post("/admin/classroom/invitation/add/", {
        "role": "learner", "expires_at_0": "2099-01-01", "expires_at_1": "00:00:00"})
    assert response.status_code == 302, response.context["adminform"].form.errors
    invite = Invitation.objects.get()
    assert len(invite.token) >= 24 and invite.created_by.username == "ada"
    refused = client.post("/admin/classroom/invitation/add/", {
        "role": "emperor", "expires_at_0": "2099-01-01", "expires_at_1": "00:00:00"})
    assert refused.status_code == 200 and "Select a valid choice" in refused.content.decode()


def test_an_admin_makes_a_cohort_in_the_admin_site() -> None:
    client = signed_in(admin())
    response = client.post("/admin/classroom/cohort/add/", {
        "name": "Admin's class", "code": "ABCDEFGH", "join_open": "on",
        "memberships-TOTAL_FORMS": "0", "memberships-INITIAL_FORMS": "0"})
    assert response.status_code == 302, response.context["adminform"].form.errors
    assert Cohort.objects.get().created_by.username == "ada"
    refused = client.post("/admin/classroom/cohort/add/", {
        "name": "Bad code", "code": "O0O0I1I1", "memberships-TOTAL_FORMS": "0", "memberships-INITIAL_FORMS": "0"})
    assert refused.status_code == 200 and "8 characters from" in refused.content.decode()
