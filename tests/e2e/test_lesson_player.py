"""A learner takes lesson 13, "the HW truncation story", in Chromium: one wrong answer (the hint
and the evidence show), the rest right, a reload that resumes at the same beat, the switch to
Chinese (Chinese prose, drawn with the lab's own font), the action beat done by hand in the lab,
to the end; the course index then shows the lesson done. Every answer the page reveals is the
one the engine's state gives (GET /lab/<id>/model.json)."""
from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.test_chinese_renders import faces_loaded_for

pytestmark = pytest.mark.e2e

SLUG = "hw-truncation-story"
RIGHT = {1: "4", 3: "2", 4: "m1, m2, m3, m4, m5", 6: "m6, m5"}


def pane(page: Page):
    return page.locator("[data-lesson-pane]")


def at(page: Page, beat: int, phase: str) -> None:
    expect(pane(page)).to_have_attribute("data-current-beat", str(beat), timeout=30_000)
    expect(pane(page)).to_have_attribute("data-phase", phase, timeout=60_000)


def beat(page: Page, index: int):
    return page.locator(f"section[data-beat='{index}']")


def answer(page: Page, index: int, text: str) -> None:
    beat(page, index).locator("input[name=answer]").fill(text)
    beat(page, index).locator("button[type=submit]").click()


def test_a_learner_takes_the_hw_truncation_lesson_to_the_end(page: Page, shoot) -> None:
    page.goto(f"/lessons/{SLUG}/")
    at(page, 0, "ready")

    # Beat 1: a type error is not an answer; then the notes' off-by-one, judged by the engine.
    answer(page, 0, "four")
    expect(beat(page, 0).locator("[data-answer-error]")).to_be_visible()
    expect(pane(page)).to_have_attribute("data-phase", "ready")
    answer(page, 0, "3")
    at(page, 0, "done")
    verdict = beat(page, 0).locator("[data-verdict]")
    expect(verdict).to_have_attribute("data-right", "false")
    session_id = page.locator("#lab").get_attribute("data-session-id")
    model = page.request.get(f"/lab/{session_id}/model.json").json()
    leo = model["partitions"]["t-0"]["replica_states"]["1"]["log_end_offset"]
    assert leo == 4
    expect(verdict).to_contain_text(str(leo))
    expect(beat(page, 0).locator("[data-hint='last-offset']")).to_be_visible()
    expect(beat(page, 0).locator("[data-evidence] li")).to_have_count(1)
    expect(page.locator("#lab")).to_have_attribute("data-lesson-evidence", "1")
    expect(beat(page, 0).locator("[data-callout]")).to_be_visible()
    shoot("lesson-en")

    # Beat 2, right; then reload: the lesson resumes where it was.
    page.keyboard.press("ArrowRight")
    at(page, 1, "ready")
    answer(page, 1, RIGHT[1])
    at(page, 1, "done")
    expect(beat(page, 1).locator("[data-verdict]")).to_have_attribute("data-right", "true")
    page.reload()
    at(page, 1, "done")
    expect(beat(page, 1).locator("[data-verdict]")).to_have_attribute("data-right", "true")

    # Chinese from here on: the prose is Chinese, and drawn with a face that has its characters.
    page.locator("[data-language-switch] button[data-language='zh-hans']").click()
    at(page, 1, "done")
    expect(beat(page, 1).locator(".lesson-prose")).to_contain_text("停止拉取")
    chinese, faces, covered = faces_loaded_for(page)
    assert len(chinese) > 30, chinese     # distinct Chinese characters on the page
    assert covered, f"characters without a glyph in the lab's font, among: {chinese} ({faces})"
    shoot("lesson-zh")

    # Beat 3: the learner kills the leader in the lab's own Faults tab.
    page.keyboard.press("ArrowRight")
    at(page, 2, "ready")
    page.click("#tab-c-faults")
    page.select_option("[data-form=broker-faults] select[name=broker]", "1")
    page.click("[data-form=broker-faults] button[data-command=kill_broker]")
    at(page, 2, "done")

    for index in (3, 4, 5, 6):
        page.keyboard.press("ArrowRight")
        at(page, index, "ready")
        if index not in RIGHT:           # a beat that asks nothing: space plays it
            page.keyboard.press("Space")
            at(page, index, "done")
            continue
        answer(page, index, RIGHT[index])
        at(page, index, "done")
        expect(beat(page, index).locator("[data-verdict]")).to_have_attribute("data-right", "true")
    page.keyboard.press("ArrowRight")
    at(page, 7, "ready")
    beat(page, 7).locator("input[value='b-m6-prime']").check()
    beat(page, 7).locator("button[type=submit]").click()
    at(page, 7, "done")
    expect(page.locator("[data-finished-box]")).to_be_visible()

    page.goto("/lessons/")
    expect(page.locator(f"[data-lesson-card='{SLUG}']")).to_have_attribute("data-status", "finished")
    assert not page.errors, page.errors
