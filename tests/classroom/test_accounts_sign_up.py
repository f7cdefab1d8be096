"""Signing up: a learner account, validated names and passwords, or a clear 'ask for an
invitation' page when self-sign-up is off."""
from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from pytest_django.fixtures import Settings

from classroom.roles import LEARNER
from tests.classroom.accounts_helpers import PASSWORD, fast_passwords, fresh_counts, learner  # noqa: F401

pytestmark = pytest.mark.django_db


def sign_up(client: Client, username: str = "newbie", password: str = PASSWORD, **extra: str):
    return client.post("/accounts/signup/", {"username": username, "password1": password,
                                             "password2": extra.pop("password2", password), **extra})


def test_a_visitor_signs_up_as_a_learner_and_is_signed_in(client: Client) -> None:
    response = sign_up(client, next="/lessons/")
    assert response.status_code == 302 and response["Location"] == "/lessons/"
    user = get_user_model().objects.get(username="newbie")
    assert list(user.groups.values_list("name", flat=True)) == [LEARNER]
    assert int(client.session["_auth_user_id"]) == user.pk
    assert "Welcome, newbie" in client.get("/").content.decode()


def test_sign_up_sends_only_to_a_same_site_next(client: Client) -> None:
    assert sign_up(client, next="https://evil.example/")["Location"] == "/"


@pytest.mark.parametrize(("username", "message"), [
    ("", "This field is required"),
    ("x" * 41, "at most 40 characters"),
    ("bad name!", "Enter a valid username"),
    ("LEA", "A user with that username already exists"),
    ("a\x00b", "Null characters are not allowed"),
])
def test_bad_usernames_are_refused_with_a_reason(client: Client, username: str, message: str) -> None:
    learner("lea")
    response = sign_up(client, username)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert get_user_model().objects.count() == 1


@pytest.mark.parametrize(("password", "password2", "message"), [
    ("short1!", None, "too short"),
    ("12345678901", None, "entirely numeric"),
    ("password123", None, "too common"),
    (PASSWORD, "something-else", "didn’t match"),
    ("NaN", None, "too short"),
])
def test_weak_or_mismatched_passwords_are_refused(client: Client, password: str, password2: str | None,
                                                  message: str) -> None:
    response = sign_up(client, "newbie", password, password2=password2 or password)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert not get_user_model().objects.filter(username="newbie").exists()


def test_with_self_sign_up_off_the_page_says_to_ask_for_an_invitation(client: Client, settings: Settings) -> None:
    settings.KAFKA_LAB_SELF_SIGNUP = False
    page = client.get("/accounts/signup/")
    assert page.status_code == 403
    assert "ask them for one" in page.content.decode().lower() and "data-signup-closed" in page.content.decode()
    assert sign_up(client).status_code == 403
    assert not get_user_model().objects.exists()
    assert "/accounts/signup/" not in client.get("/accounts/login/").content.decode().split("</header>")[1]
