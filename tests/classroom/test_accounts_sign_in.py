"""Signing in and out: same-site `next` only, CSRF on the POST, a lockout after failed tries."""
from __future__ import annotations

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from tests.classroom.accounts_helpers import PASSWORD, fast_passwords, fresh_counts, learner  # noqa: F401

pytestmark = pytest.mark.django_db


def test_the_sign_in_page_shows_its_form_and_the_way_to_sign_up(client: Client) -> None:
    html = client.get("/accounts/login/").content.decode()
    assert 'name="username"' in html and 'name="password"' in html and "csrfmiddlewaretoken" in html
    assert "/accounts/signup/" in html


def test_a_learner_signs_in_and_goes_to_next(client: Client) -> None:
    user = learner()
    response = client.post("/accounts/login/", {"username": "lea", "password": PASSWORD, "next": "/lessons/"})
    assert response.status_code == 302 and response["Location"] == "/lessons/"
    assert int(client.session["_auth_user_id"]) == user.pk


@pytest.mark.parametrize("target", ["https://evil.example/", "//evil.example/x", "http://testserver.evil/",
                                    "javascript:alert(1)", "/" + "x" * 3000])
def test_sign_in_never_sends_the_visitor_off_site(client: Client, target: str) -> None:
    learner()
    response = client.post("/accounts/login/", {"username": "lea", "password": PASSWORD, "next": target})
    assert response.status_code == 302 and response["Location"] == "/"


def test_a_wrong_password_is_a_clear_error(client: Client) -> None:
    learner()
    response = client.post("/accounts/login/", {"username": "lea", "password": "nope"})
    assert response.status_code == 400
    assert "enter a correct username and password" in response.content.decode()
    assert "_auth_user_id" not in client.session


@pytest.mark.parametrize("fields", [{}, {"username": ""}, {"username": "x" * 5000, "password": "y"},
                                    {"username": "NaN", "password": "NaN"}, {"username": "a\x00b", "password": "p"}])
def test_bad_sign_in_input_is_a_400_not_a_500(client: Client, fields: dict) -> None:
    assert client.post("/accounts/login/", fields).status_code == 400


def test_five_failures_lock_the_name_out_from_here_even_with_the_right_password(client: Client) -> None:
    learner()
    for _ in range(5):
        assert client.post("/accounts/login/", {"username": "lea", "password": "wrong"}).status_code == 400
    response = client.post("/accounts/login/", {"username": "LEA", "password": PASSWORD})
    assert response.status_code == 429
    assert "Too many failed sign-ins" in response.content.decode()
    assert "_auth_user_id" not in client.session


def test_the_lockout_is_per_visitor_and_a_success_clears_the_count(client: Client) -> None:
    learner()
    for _ in range(4):
        client.post("/accounts/login/", {"username": "lea", "password": "wrong"})
    other_place = Client(REMOTE_ADDR="10.0.0.9")
    for _ in range(5):
        other_place.post("/accounts/login/", {"username": "lea", "password": "wrong"})
    assert client.post("/accounts/login/", {"username": "lea", "password": PASSWORD}).status_code == 302
    client.logout()
    for _ in range(4):
        client.post("/accounts/login/", {"username": "lea", "password": "wrong"})
    assert client.post("/accounts/login/", {"username": "lea", "password": PASSWORD}).status_code == 302
    assert other_place.post("/accounts/login/", {"username": "lea", "password": PASSWORD}).status_code == 429


def test_sign_in_and_sign_out_need_the_csrf_token() -> None:
    user = learner()
    client = Client(enforce_csrf_checks=True)
    assert client.post("/accounts/login/", {"username": "lea", "password": PASSWORD}).status_code == 403
    client.force_login(user)
    assert client.post("/accounts/logout/").status_code == 403
    assert "_auth_user_id" in client.session


def test_sign_out_is_a_post_a_get_only_asks(client: Client) -> None:
    client.force_login(learner())
    page = client.get("/accounts/logout/")
    assert page.status_code == 200 and "_auth_user_id" in client.session
    assert 'method="post"' in page.content.decode()
    assert client.post("/accounts/logout/").status_code == 302
    assert "_auth_user_id" not in client.session


def test_the_header_shows_who_is_signed_in(client: Client) -> None:
    html = client.get("/accounts/login/").content.decode()
    assert "data-account-login" in html and "data-account-signup" in html
    client.force_login(learner())
    html = client.get("/").content.decode()
    assert 'data-account-name title="Your progress">lea</a>' in html        # the name leads to /me/progress/
    assert 'href="/me/progress/" data-account-name' in html
    assert "data-account-login" not in html and "data-account-cohorts>Cohorts</a>" in html  # the cohorts one is in


def test_the_headers_links_on_the_sign_in_page_keep_its_next(client: Client) -> None:
    html = client.get("/accounts/login/?next=/join/ABCDEFGH/").content.decode()
    assert 'href="/accounts/signup/?next=/join/ABCDEFGH/" data-account-signup' in html


def test_thirty_failures_over_many_names_lock_the_visitor_out(client: Client) -> None:
    learner()
    for i in range(30):
        assert client.post("/accounts/login/", {"username": f"name{i}", "password": "wrong"}).status_code == 400
    assert client.post("/accounts/login/", {"username": "lea", "password": PASSWORD}).status_code == 429
    elsewhere = Client(REMOTE_ADDR="10.0.0.3")
    assert elsewhere.post("/accounts/login/", {"username": "lea", "password": PASSWORD}).status_code == 302


def test_behind_the_tls_proxy_the_visitor_is_the_address_the_proxy_forwarded(settings: Settings) -> None:
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    learner()
    attacker = Client(HTTP_X_FORWARDED_FOR="1.2.3.4, 203.0.113.7")    # the first entry is made up by the client
    for _ in range(5):
        attacker.post("/accounts/login/", {"username": "lea", "password": "wrong"})
    assert attacker.post("/accounts/login/", {"username": "lea", "password": PASSWORD}).status_code == 429
    same_proxy = Client(HTTP_X_FORWARDED_FOR="198.51.100.2")
    assert same_proxy.post("/accounts/login/", {"username": "lea", "password": PASSWORD}).status_code == 302
