"""In Debian's Chromium against the real Daphne: a visitor builds a lab session without an account,
signs up from the header, and the session is theirs — listed, and its WebSocket connects under the
account; signed out, this browser no longer opens it; signed in again, it does."""
from __future__ import annotations

import re
import secrets

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import new_session

pytestmark = pytest.mark.e2e
PASSWORD = "a-Long-passw0rd!"


def test_a_visitor_signs_up_and_keeps_the_lab_session_they_made(page: Page) -> None:
    session_id = new_session(page, name="made before signing up")
    username = f"e2e{secrets.token_hex(4)}"

    page.locator("[data-account-signup]").click()
    page.fill("#id_username", username)
    page.fill("#id_password1", PASSWORD)
    page.fill("#id_password2", PASSWORD)
    page.locator("main button[type=submit]").click()
    page.wait_for_url(re.compile(rf"/lab/{session_id}/$"))          # back where the visitor was
    expect(page.locator("[data-messages]")).to_contain_text("1 lab session is now in your account.")
    expect(page.locator("[data-account-name]")).to_have_text(username)
    expect(page.locator("[data-conn-text]")).to_have_text("connected")

    page.goto("/lab/sessions")
    expect(page.locator("main")).to_contain_text("made before signing up")

    page.locator("[data-account] button[type=submit]").click()      # sign out (a POST)
    expect(page.locator("[data-account-login]")).to_be_visible()
    page.goto(f"/lab/{session_id}/")
    expect(page.locator("[data-not-found]")).to_be_visible()
    page.errors.clear()                 # that page's 404 is its answer, not a fault

    page.goto(f"/accounts/login/?next=/lab/{session_id}/")
    page.fill("#id_username", username)
    page.fill("#id_password", PASSWORD)
    page.locator("main button[type=submit]").click()
    page.wait_for_url(re.compile(rf"/lab/{session_id}/$"))
    expect(page.locator("[data-conn-text]")).to_have_text("connected")
    assert not page.errors, page.errors
