"""Invitations: links shown to their maker that open one account each, also with self-sign-up off;
instructors invite learners to their own cohorts, only admins invite instructors and admins."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from pytest_django.fixtures import Settings

from classroom.models import Invitation, Membership
from classroom.roles import ADMIN, INSTRUCTOR, LEARNER, role_of
from tests.classroom.accounts_helpers import (  # noqa: F401
    PASSWORD,
    admin,
    cohort,
    fast_passwords,
    fresh_counts,
    instructor,
    learner,
    signed_in,
)

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def no_self_signup(settings: Settings) -> None:
    settings.KAFKA_LAB_SELF_SIGNUP = False


def make(client: Client, **fields: object):
    return client.post("/accounts/invitations/", {"role": "learner", "days": "7", **fields})


def sign_up_with(client: Client, token: str, username: str = "newbie"):
    return client.post(f"/accounts/invitation/{token}/", {"username": username, "password1": PASSWORD,
                                                         "password2": PASSWORD})


def test_an_instructor_invites_a_learner_who_signs_up_into_the_cohort(client: Client) -> None:
    teacher = instructor()
    c = cohort(teacher=teacher)
    page = make(signed_in(teacher), cohort=str(c.pk))
    invite = Invitation.objects.get()
    assert page.status_code == 200
    assert f"http://testserver/accounts/invitation/{invite.token}/" in page.content.decode()
    assert (invite.role, invite.cohort, invite.created_by) == (LEARNER, c, teacher)

    form = client.get(f"/accounts/invitation/{invite.token}/")
    assert form.status_code == 200 and "to the cohort <strong>Kafka 101</strong>" in form.content.decode()
    response = sign_up_with(client, invite.token)
    assert response.status_code == 302
    newbie = get_user_model().objects.get(username="newbie")
    assert role_of(newbie) == LEARNER and Membership.objects.filter(cohort=c, user=newbie).exists()
    assert int(client.session["_auth_user_id"]) == newbie.pk
    invite.refresh_from_db()
    assert invite.used_by == newbie and invite.used_at is not None


def test_an_invitation_opens_one_account_only() -> None:
    invite = Invitation.objects.create(role=LEARNER, expires_at=timezone.now() + timedelta(days=1))
    assert sign_up_with(Client(), invite.token, "first").status_code == 302
    second = sign_up_with(Client(), invite.token, "second")
    assert second.status_code == 410 and "was used already" in second.content.decode()
    assert Client().get(f"/accounts/invitation/{invite.token}/").status_code == 410
    assert not get_user_model().objects.filter(username="second").exists()


@pytest.mark.parametrize(("token", "message"), [("expired", "has expired"), ("nope", "no such invitation"),
                                                ("x" * 500, "no such invitation")])
def test_expired_or_unknown_invitations_are_a_clear_page(client: Client, token: str, message: str) -> None:
    Invitation.objects.create(token="expired", role=LEARNER, expires_at=timezone.now() - timedelta(seconds=1))
    response = client.get(f"/accounts/invitation/{token}/")
    assert response.status_code == 410 and message in response.content.decode()
    assert sign_up_with(client, token).status_code == 410
    assert not get_user_model().objects.exists()


def test_a_bad_sign_up_through_an_invitation_keeps_the_invitation(client: Client) -> None:
    invite = Invitation.objects.create(role=LEARNER, expires_at=timezone.now() + timedelta(days=1))
    response = client.post(f"/accounts/invitation/{invite.token}/", {"username": "x" * 41, "password1": "a",
                                                                     "password2": "b"})
    assert response.status_code == 400
    invite.refresh_from_db()
    assert invite.used_at is None


def test_an_instructor_may_invite_only_learners_into_their_own_cohorts() -> None:
    teacher = instructor()
    theirs = cohort("Theirs", teacher=instructor("other"))
    client = signed_in(teacher)
    assert 'value="instructor"' not in client.get("/accounts/invitations/").content.decode()
    assert make(client, role="instructor", cohort="").status_code == 400
    assert make(client, role="admin").status_code == 400
    refused = make(client, cohort=str(theirs.pk))
    assert refused.status_code == 400 and "Select a valid choice" in refused.content.decode()
    assert "Choose one of your cohorts" in make(client).content.decode()
    assert not Invitation.objects.exists()


@pytest.mark.parametrize("days", ["NaN", "0", "31", "", "1e3"])
def test_an_invitation_lasts_1_to_30_days(days: str) -> None:
    teacher = instructor()
    response = make(signed_in(teacher), cohort=str(cohort(teacher=teacher).pk), days=days)
    assert response.status_code == 400
    assert not Invitation.objects.exists()


def test_an_admin_invites_an_instructor_who_then_teaches_the_cohort(client: Client) -> None:
    c = cohort(teacher=None)
    make(signed_in(admin()), role="instructor", cohort=str(c.pk))
    invite = Invitation.objects.get()
    sign_up_with(client, invite.token, "teacher2")
    teacher2 = get_user_model().objects.get(username="teacher2")
    assert role_of(teacher2) == INSTRUCTOR and list(c.instructors.all()) == [teacher2]
    assert client.get(f"/cohorts/{c.pk}/").status_code == 200


def test_an_admin_invites_an_admin_without_a_cohort(client: Client) -> None:
    make(signed_in(admin()), role="admin")
    sign_up_with(client, Invitation.objects.get().token, "boss2")
    assert role_of(get_user_model().objects.get(username="boss2")) == ADMIN


def test_a_signed_in_learner_takes_an_invitation_for_their_account() -> None:
    lea = learner()
    c = cohort(teacher=instructor())
    invite = Invitation.objects.create(role=LEARNER, cohort=c, expires_at=timezone.now() + timedelta(days=1))
    client = signed_in(lea)
    assert "You are signed in as lea" in client.get(f"/accounts/invitation/{invite.token}/").content.decode()
    assert client.post(f"/accounts/invitation/{invite.token}/").status_code == 302
    assert Membership.objects.filter(cohort=c, user=lea).exists()


def test_a_learner_invitation_never_lowers_an_instructor() -> None:
    teacher = instructor()
    invite = Invitation.objects.create(role=LEARNER, expires_at=timezone.now() + timedelta(days=1))
    signed_in(teacher).post(f"/accounts/invitation/{invite.token}/")
    assert role_of(get_user_model().objects.get(pk=teacher.pk)) == INSTRUCTOR


def test_learners_and_anonymous_visitors_may_not_make_invitations(client: Client) -> None:
    assert client.get("/accounts/invitations/")["Location"].startswith("/accounts/login/")
    page = signed_in(learner()).get("/accounts/invitations/")
    assert page.status_code == 403 and "Only instructors and admins" in page.content.decode()
    assert make(signed_in(learner("lou"))).status_code == 403
    assert not Invitation.objects.exists()


def test_the_maker_sees_their_invitations_and_their_state() -> None:
    teacher = instructor()
    c = cohort(teacher=teacher)
    client = signed_in(teacher)
    make(client, cohort=str(c.pk))
    make(client, cohort=str(c.pk))
    used = Invitation.objects.first()
    sign_up_with(Client(), used.token, "newbie")
    html = client.get("/accounts/invitations/").content.decode()
    assert "used by newbie" in html and "open until" in html
    assert f"/accounts/invitation/{used.token}/" not in html, "a used link is not offered again"


def test_the_form_chooses_the_instructors_cohort_for_them() -> None:
    teacher = instructor()
    only = cohort(teacher=teacher)
    client = signed_in(teacher)
    assert f'<option value="{only.pk}" selected>' in client.get("/accounts/invitations/").content.decode()
    second = cohort("Second", teacher=teacher)
    html = client.get(f"/accounts/invitations/?cohort={second.pk}").content.decode()
    assert f'<option value="{second.pk}" selected>' in html and f'<option value="{only.pk}" selected>' not in html
    theirs = cohort("Theirs", teacher=instructor("other"))
    assert "Theirs" not in client.get(f"/accounts/invitations/?cohort={theirs.pk}").content.decode()
    assert client.get("/accounts/invitations/?cohort=NaN").status_code == 200
