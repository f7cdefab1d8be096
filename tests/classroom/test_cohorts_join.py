"""A learner joins a cohort with its link or its typed code; wrong, closed and expired codes say
so, and code guessing is limited per visitor."""
from __future__ import annotations

from datetime import timedelta
from urllib.parse import quote

import pytest
from django.test import Client
from django.utils import timezone

from classroom.models import Membership
from tests.classroom.accounts_helpers import (  # noqa: F401
    PASSWORD,
    cohort,
    fast_passwords,
    fresh_counts,
    instructor,
    learner,
    signed_in,
)

pytestmark = pytest.mark.django_db


def test_a_join_link_asks_then_joins_on_post() -> None:
    lea = learner()
    c = cohort(teacher=instructor())
    client = signed_in(lea)
    page = client.get(f"/join/{c.code}/")
    assert page.status_code == 200 and "Join the cohort <strong>Kafka 101</strong>" in page.content.decode()
    assert not Membership.objects.exists()
    response = client.post(f"/join/{c.code}/")
    assert response.status_code == 302 and response["Location"] == "/cohorts/"
    assert Membership.objects.get().user == lea
    assert "You joined Kafka 101" in client.get("/cohorts/").content.decode()


def test_a_typed_code_joins_whatever_its_case_spaces_and_dashes() -> None:
    c = cohort(teacher=instructor(), code="ABCDEFGH")
    client = signed_in(learner())
    assert client.post("/join/", {"code": " abcd-efgh "}).status_code == 302
    assert Membership.objects.filter(cohort=c).count() == 1
    again = client.post("/join/", {"code": "ABCD EFGH"})
    assert again.status_code == 302 and "already in Kafka 101" in client.get("/cohorts/").content.decode()
    assert Membership.objects.count() == 1


@pytest.mark.parametrize("code", ["ZZZZZZZZ", "0OIL1XYZ", "x" * 40, "NaN", "--"])
def test_a_wrong_code_says_so(code: str) -> None:
    cohort(teacher=instructor(), code="ABCDEFGH")
    response = signed_in(learner()).post("/join/", {"code": code})
    assert response.status_code in (400, 404)
    assert not Membership.objects.exists()
    if response.status_code == 404:
        assert "No cohort has this code" in response.content.decode()


def test_an_overlong_or_empty_code_is_a_form_error() -> None:
    client = signed_in(learner())
    assert "at most 40 characters" in client.post("/join/", {"code": "A" * 41}).content.decode()
    assert client.post("/join/", {"code": ""}).status_code == 400
    assert client.get("/join/" + "A" * 300 + "/").status_code == 404


def test_a_closed_code_says_joining_is_closed() -> None:
    c = cohort(teacher=instructor(), join_open=False)
    client = signed_in(learner())
    tries = (client.get(f"/join/{c.code}/"), client.post(f"/join/{c.code}/"), client.post("/join/", {"code": c.code}))
    for response in tries:
        assert response.status_code == 403 and "Joining Kafka 101 is closed" in response.content.decode()
    assert not Membership.objects.exists()


def test_an_expired_code_says_it_has_expired() -> None:
    c = cohort(teacher=instructor(), join_expires_at=timezone.now() - timedelta(minutes=1))
    response = signed_in(learner()).post(f"/join/{c.code}/")
    assert response.status_code == 403 and "has expired" in response.content.decode()
    assert not Membership.objects.exists()


def test_ten_wrong_codes_stop_the_guessing_for_a_while() -> None:
    c = cohort(teacher=instructor())
    client = signed_in(learner())
    for i in range(10):
        assert client.get(f"/join/WRONG{i:03d}/").status_code == 404
    response = client.post("/join/", {"code": c.code})
    assert response.status_code == 429 and "Too many wrong codes" in response.content.decode()
    assert not Membership.objects.exists()
    elsewhere = signed_in(learner("lou"))
    elsewhere.defaults["REMOTE_ADDR"] = "10.0.0.2"
    assert elsewhere.post("/join/", {"code": c.code}).status_code == 302


def test_an_anonymous_visitor_signs_up_and_comes_back_to_join(client: Client) -> None:
    c = cohort(teacher=instructor())
    link = f"/join/{c.code}/"
    to_login = client.get(link)
    assert to_login.status_code == 302 and to_login["Location"] == f"/accounts/login/?next={quote(link)}"
    login_page = client.get(to_login["Location"]).content.decode()
    assert f'name="next" value="{link}"' in login_page
    assert f"/accounts/signup/?next={quote(link)}" in login_page
    signed_up = client.post("/accounts/signup/", {"username": "newbie", "password1": PASSWORD,
                                                  "password2": PASSWORD, "next": link})
    assert signed_up["Location"] == link
    assert client.post(link).status_code == 302
    assert Membership.objects.get(cohort=c).user.username == "newbie"


def test_an_anonymous_visitor_signs_in_and_comes_back_to_join(client: Client) -> None:
    learner()
    c = cohort(teacher=instructor())
    link = f"/join/{c.code}/"
    response = client.post("/accounts/login/", {"username": "lea", "password": PASSWORD, "next": link})
    assert response["Location"] == link
    assert "Join the cohort" in client.get(link).content.decode()


def test_joining_needs_the_csrf_token() -> None:
    c = cohort(teacher=instructor())
    client = Client(enforce_csrf_checks=True)
    client.force_login(learner())
    assert client.post(f"/join/{c.code}/").status_code == 403
    assert client.post("/join/", {"code": c.code}).status_code == 403
    assert not Membership.objects.exists()
