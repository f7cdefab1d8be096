"""An instructor makes cohorts and manages their join codes; who may open which page."""
from __future__ import annotations

from datetime import timedelta

import pytest
from django.test import Client
from django.utils import timezone

from classroom.models import CODE_ALPHABET, Cohort, Membership
from tests.classroom.accounts_helpers import admin, cohort, fast_passwords, fresh_counts, instructor, learner, signed_in  # noqa: F401

pytestmark = pytest.mark.django_db


def test_an_instructor_creates_a_cohort_and_sees_its_link_and_code() -> None:
    teacher = instructor()
    client = signed_in(teacher)
    response = client.post("/cohorts/new", {"name": "Kafka 101", "code_days": "7"})
    made = Cohort.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/cohorts/{made.pk}/"
    assert list(made.instructors.all()) == [teacher] and made.created_by == teacher
    assert set(made.code) <= set(CODE_ALPHABET) and not set(made.code) & set("0O1IL")
    assert timedelta(days=6) < made.join_expires_at - timezone.now() <= timedelta(days=7)
    html = client.get(f"/cohorts/{made.pk}/").content.decode()
    assert f"http://testserver/join/{made.code}/" in html
    assert f"{made.code[:4]}-{made.code[4:]}" in html
    assert "Cohort Kafka 101 is ready" in html


@pytest.mark.parametrize(("fields", "message"), [
    ({"name": ""}, "This field is required"),
    ({"name": "x" * 101}, "at most 100 characters"),
    ({"name": "ok", "code_days": "NaN"}, "Enter a whole number"),
    ({"name": "ok", "code_days": "inf"}, "Enter a whole number"),
    ({"name": "ok", "code_days": "0"}, "greater than or equal to 1"),
    ({"name": "ok", "code_days": "100000"}, "less than or equal to 365"),
])
def test_bad_cohort_input_is_refused_with_a_reason(fields: dict, message: str) -> None:
    response = signed_in(instructor()).post("/cohorts/new", fields)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not Cohort.objects.exists()


def test_a_learner_may_not_create_or_open_a_cohort() -> None:
    mine = cohort(teacher=instructor(), learners=(learner(),))
    client = signed_in(learner("lou"))
    response = client.post("/cohorts/new", {"name": "mine now"})
    assert response.status_code == 403 and "Only instructors" in response.content.decode()
    assert client.get(f"/cohorts/{mine.pk}/").status_code == 403
    assert client.post(f"/cohorts/{mine.pk}/code", {"action": "close"}).status_code == 403
    assert Cohort.objects.count() == 1 and Cohort.objects.get().join_open


def test_an_instructor_of_another_cohort_gets_403() -> None:
    theirs = cohort(teacher=instructor("other"), learners=(learner(),))
    client = signed_in(instructor())
    page = client.get(f"/cohorts/{theirs.pk}/")
    assert page.status_code == 403 and "not one you teach" in page.content.decode()
    assert client.post(f"/cohorts/{theirs.pk}/code", {"action": "regenerate"}).status_code == 403
    assert client.post(f"/cohorts/{theirs.pk}/remove/{theirs.memberships.get().user_id}").status_code == 403
    assert Membership.objects.count() == 1
    assert "Kafka 101" not in client.get("/cohorts/").content.decode()


def test_an_admin_opens_every_cohort() -> None:
    theirs = cohort(teacher=instructor("other"), learners=(learner(),))
    client = signed_in(admin())
    page = client.get(f"/cohorts/{theirs.pk}/")
    assert page.status_code == 200 and "lea" in page.content.decode()
    assert "Kafka 101" in client.get("/cohorts/").content.decode()


def test_an_anonymous_visitor_is_sent_to_sign_in(client: Client) -> None:
    c = cohort(teacher=instructor())
    for url in ("/cohorts/", f"/cohorts/{c.pk}/", "/join/"):
        response = client.get(url)
        assert response.status_code == 302 and response["Location"].startswith("/accounts/login/?next=")
    assert client.post("/cohorts/new", {"name": "x"})["Location"].startswith("/accounts/login/")


def test_an_unknown_cohort_is_404() -> None:
    assert signed_in(instructor()).get("/cohorts/999/").status_code == 404


def test_the_instructor_closes_reopens_regenerates_and_sets_an_expiry() -> None:
    teacher = instructor()
    c = cohort(teacher=teacher)
    client = signed_in(teacher)
    url = f"/cohorts/{c.pk}/code"
    client.post(url, {"action": "close"})
    c.refresh_from_db()
    assert c.join_refusal() == "closed"
    assert "Joining is closed" in client.get(f"/cohorts/{c.pk}/").content.decode()
    client.post(url, {"action": "reopen"})
    old = c.code
    client.post(url, {"action": "regenerate"})
    c.refresh_from_db()
    assert c.join_refusal() == "" and c.code != old
    client.post(url, {"action": "expiry", "code_days": "2"})
    c.refresh_from_db()
    assert c.join_expires_at is not None
    client.post(url, {"action": "expiry", "code_days": ""})
    c.refresh_from_db()
    assert c.join_expires_at is None


@pytest.mark.parametrize("fields", [{"action": "explode"}, {}, {"action": "expiry", "code_days": "NaN"},
                                    {"action": "expiry", "code_days": "-3"}])
def test_a_bad_code_action_is_a_400(fields: dict) -> None:
    teacher = instructor()
    c = cohort(teacher=teacher)
    response = signed_in(teacher).post(f"/cohorts/{c.pk}/code", fields)
    assert response.status_code == 400
    assert c.code == Cohort.objects.get().code


def test_the_instructor_sees_the_learners_and_removes_one() -> None:
    teacher = instructor()
    lea, lou = learner("lea"), learner("lou")
    c = cohort(teacher=teacher, learners=(lea, lou))
    client = signed_in(teacher)
    html = client.get(f"/cohorts/{c.pk}/").content.decode()
    assert "2 learners" in html and "lea" in html and "lou" in html
    assert client.post(f"/cohorts/{c.pk}/remove/{lou.pk}").status_code == 302
    assert list(Membership.objects.values_list("user__username", flat=True)) == ["lea"]
    assert client.get(f"/cohorts/{c.pk}/remove/{lea.pk}").status_code == 405


def test_a_learner_sees_their_cohorts_and_leaves_one() -> None:
    lea = learner()
    c = cohort(teacher=instructor(), learners=(lea,))
    cohort("Other class", teacher=instructor("x"), learners=(learner("lou"),))
    client = signed_in(lea)
    html = client.get("/cohorts/").content.decode()
    assert "Kafka 101" in html and "Other class" not in html and "New cohort" not in html
    assert client.post(f"/cohorts/{c.pk}/leave").status_code == 302
    assert not Membership.objects.filter(user=lea).exists()
    again = client.post(f"/cohorts/{c.pk}/leave")
    assert again.status_code == 404 and "not in this cohort" in again.content.decode()


def test_the_header_offers_cohorts_to_an_instructor() -> None:
    html = signed_in(instructor()).get("/").content.decode()
    assert "data-account-cohorts>Cohorts</a>" in html
