"""The cohort's table sorts in a real browser, by keyboard: the page as the view renders it (test
client, pytest's DB) is written into a page of the real Daphne server, so the table's script and
the JavaScript catalogue load from /static/ and /jsi18n/ as they do for an instructor."""
from __future__ import annotations

import pytest
from django.urls import reverse

from tests.classroom.progress_helpers import BEATS, cohort, instructor, progress, user
from tests.e2e.conftest import browser, page  # noqa: F401 (the browser tests' fixtures)

pytestmark = [pytest.mark.django_db, pytest.mark.e2e]


def _order(page) -> list[str]:
    return page.locator("[data-progress-table] tbody tr th[scope=row]").evaluate_all(
        "cells => cells.map(c => c.dataset.sortValue)")


def test_a_heading_sorts_its_column_with_enter_and_space_and_says_so(client, page):  # noqa: F811
    teacher = instructor()
    ann, bob, cat = user("ann"), user("bob"), user("cat")
    group = cohort("Kafka 101", teacher, [cat, ann, bob])
    progress(bob, seen=BEATS, finished=True, answers={"create": {"first": "five", "right": True}})
    progress(ann, seen=BEATS[:3])
    client.force_login(teacher)
    html = client.get(reverse("classroom:cohort_progress", args=[group.pk])).content.decode()

    page.goto("/lessons/")                  # the server's origin: the page's /static/ URLs resolve there
    page.set_content(html)
    page.wait_for_function("document.querySelector('[data-progress-table]') !== null")
    assert _order(page) == ["ann", "bob", "cat"]

    lesson = page.locator("thead th[data-lesson-column] [data-sort-button]").first
    lesson.focus()
    page.keyboard.press("Enter")            # numbers: the furthest along first
    page.wait_for_function("document.querySelector('thead th[data-lesson-column]').getAttribute('aria-sort') !== null")
    assert _order(page) == ["bob", "ann", "cat"]
    assert page.locator("thead th[data-lesson-column]").first.get_attribute("aria-sort") == "descending"
    assert page.locator("thead th").first.get_attribute("aria-sort") is None
    assert "descending" in page.locator("[data-sort-status]").text_content()

    page.keyboard.press("Space")            # the same button again: the other way
    assert _order(page) == ["cat", "ann", "bob"]
    assert page.locator("thead th[data-lesson-column]").first.get_attribute("aria-sort") == "ascending"

    learner = page.locator("thead th").first.locator("[data-sort-button]")
    learner.focus()
    page.keyboard.press("Enter")            # text: A first
    assert _order(page) == ["ann", "bob", "cat"]
    page.keyboard.press("Enter")
    assert _order(page) == ["cat", "bob", "ann"]
    assert page.locator("[data-progress-table] tfoot tr[data-totals]").count() == 1
    assert page.errors == []
