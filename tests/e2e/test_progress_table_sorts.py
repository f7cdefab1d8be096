"""The cohort's table sorts in a real browser, by keyboard. The page is the real template
rendered from a table built by classroom.progress's pure functions (no database: pytest's own
stays out of the browser test), written into a page of the real Daphne server, so the table's
script and the JavaScript catalogue load from /static/ and /jsi18n/ as they do for an instructor."""
from __future__ import annotations

from types import SimpleNamespace

import pytest
from django.contrib.auth import get_user_model
from django.template.loader import render_to_string
from django.test import RequestFactory

from classroom import progress
from classroom.models import Cohort
from classroom.views_progress import progress_context
from lessons import catalog
from tests.classroom.progress_helpers import BEATS, LESSON

pytestmark = pytest.mark.e2e


def _page_html() -> str:
    User = get_user_model()
    ann, bob, cat = (User(pk=pk, username=name) for pk, name in ((1, "ann"), (2, "bob"), (3, "cat")))
    rows = [SimpleNamespace(owner="user:2", slug=LESSON, seen=BEATS, finished=True,
                            answers={"create": {"first": "five", "right": True}}),
            SimpleNamespace(owner="user:1", slug=LESSON, seen=BEATS[:3], finished=False, answers={})]
    table = progress.build_table([ann, bob, cat], rows, [], progress.lesson_columns(catalog.lessons(), "en"),
                                 progress.exercise_columns())
    request = RequestFactory().get("/cohorts/1/progress/")
    return render_to_string("classroom/progress.html", progress_context(Cohort(pk=1, name="Kafka 101"), table, [], 3),
                            request=request)


def _order(page) -> list[str]:
    return page.locator("[data-progress-table] tbody tr th[scope=row]").evaluate_all(
        "cells => cells.map(c => c.dataset.sortValue)")


def test_a_heading_sorts_its_column_with_enter_and_space_and_says_so(page, shoot):  # noqa: F811
    html = _page_html()
    page.goto("/lessons/")                  # the server's origin: the page's /static/ URLs resolve there
    page.set_content(html)
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
    shoot("classroom-progress-table")
