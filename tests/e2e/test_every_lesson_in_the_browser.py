"""Every lesson, beat by beat, in Chromium at 10×: each question answered as its golden trace says
the engine answers, each `do` beat done with "Show me", each other beat played; every beat must
reach `done`, every verdict must be right, and the page must raise no error. (The answers
themselves are checked against the engine in tests/lessons; this is the page's flow for every
kind of beat of every lesson.)"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from lessons.schema import lesson_folders

pytestmark = pytest.mark.e2e

GOLDEN = Path(__file__).resolve().parents[1] / "lessons" / "golden"
SLUGS = [Path(folder).name[3:] for folder in lesson_folders()]


def typed(answer: object) -> str:
    return ", ".join(map(str, answer)) if isinstance(answer, list) else str(answer)


@pytest.mark.parametrize("slug", SLUGS)
def test_every_beat_of_the_lesson_plays_to_a_right_verdict(page: Page, slug: str) -> None:
    answers = json.loads((GOLDEN / f"{slug}.json").read_text(encoding="utf-8"))["answers"]
    page.goto(f"/lessons/{slug}/")
    pane = page.locator("[data-lesson-pane]")
    expect(pane).to_have_attribute("data-phase", "ready", timeout=30_000)
    page.select_option("[data-lesson-speed]", "10")
    beats = json.loads(page.locator("#lesson-structure").text_content())["beats"]
    for beat in beats:
        index = beat["index"]
        expect(pane).to_have_attribute("data-current-beat", str(index), timeout=30_000)
        expect(pane).to_have_attribute("data-phase", "ready", timeout=30_000)
        section = page.locator(f"section[data-beat='{index}']")
        if beat["question"]:
            answer = answers[beat["id"]]
            if beat["question"]["kind"] == "choice":
                section.locator(f"input[value='{answer}']").check()
            else:
                section.locator("input[name=answer]").fill(typed(answer))
            section.locator("button[type=submit]").click()
        elif beat["do"]:
            section.locator("[data-lesson=show]").click()
        else:
            page.locator(".lesson-nav [data-lesson=play]").click()
        expect(pane).to_have_attribute("data-phase", "done", timeout=120_000)
        if beat["question"]:
            expect(section.locator("[data-verdict]")).to_have_attribute("data-right", "true")
            for slot in section.locator(".lesson-explain [data-answer]").all():   # {answer} in the prose
                expect(slot).not_to_be_empty()
        if index < len(beats) - 1:
            page.locator(".lesson-nav [data-lesson=next]").click()
    expect(page.locator("[data-finished-box]")).to_be_visible()
    assert not page.errors, page.errors
