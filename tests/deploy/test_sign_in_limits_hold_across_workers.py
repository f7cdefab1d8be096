"""The sign-in lockout (classroom.throttle) counts in the shared cache (Redis with REDIS_URL): five
wrong passwords for one name lock it out whichever workers the attempts reached — not five per
worker."""
from __future__ import annotations

import http.cookiejar
import re
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import psycopg
from django.contrib.auth.hashers import make_password

from lab import local_services
from tests.deploy.cluster import running_workers


def _create_user(database_url: str, username: str, password: str) -> None:
    with psycopg.connect(database_url) as connection:
        connection.execute(
            "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff, "
            "is_active, date_joined) VALUES (%s, false, %s, '', '', '', false, true, now())",
            (make_password(password), username))


def _sign_in(opener: urllib.request.OpenerDirector, base: str, username: str, password: str) -> int:
    page = opener.open(base + "/accounts/login/", timeout=30).read().decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    body = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "username": username, "password": password})
    request = urllib.request.Request(base + "/accounts/login/", data=body.encode(),
                                     headers={"Referer": base + "/accounts/login/"})
    try:
        return opener.open(request, timeout=30).status
    except urllib.error.HTTPError as error:
        return error.code


def test_wrong_passwords_spread_over_two_workers_lock_the_name_out(tmp_path: Path) -> None:
    database_url, redis_url = local_services.postgres_url(), local_services.redis_url()
    with running_workers(tmp_path, database_url, redis_url, count=2) as (a, b):
        _create_user(database_url, "lea", "a-good-long-password")
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        statuses = [_sign_in(opener, worker.url, "lea", "wrong-password") for worker in (a, b, a, b, a)]
        assert statuses == [400] * 5           # the form again, with its error
        # a sixth try — even with the right password — is refused on either worker
        assert _sign_in(opener, b.url, "lea", "a-good-long-password") == 429
        assert _sign_in(opener, a.url, "lea", "a-good-long-password") == 429
