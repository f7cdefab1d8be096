"""A learner travels in time on the page: every Step says what it did, a reload keeps the event log
and a click in it rewinds to just after that event, a command after a rewind asks first and can
be undone, and loading a scenario asks before it replaces the session."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import create_topic, new_session

pytestmark = pytest.mark.e2e


def step_number(page: Page) -> int:
    return int(page.locator("[data-clock-root]").get_attribute("data-step"))


def test_every_step_says_what_it_did(page: Page) -> None:
    new_session(page, seed=3, name="steps")
    create_topic(page, "t", partitions=1)
    expect(page.locator("[data-partition-summary='t-0']")).to_have_attribute("data-leader", re.compile(r"^[123]$"))
    for _ in range(6):
        before = step_number(page)
        page.click("[data-clock=step]")
        expect(page.locator("[data-clock-root]")).to_have_attribute("data-step", str(before + 1))
        expect(page.locator("[data-clock=last]")).to_contain_text(f"Step {before + 1}")


def test_a_reload_keeps_the_event_log_and_a_click_rewinds_to_just_after_an_event(page: Page) -> None:
    session_id = new_session(page, seed=4, name="reload")
    create_topic(page, "t", partitions=2)
    page.click("#tab-c-produce")
    page.locator("form[data-form=produce] [name=count]").fill("5")
    page.locator("form[data-form=produce] button[type=submit]").click()
    page.click("[data-clock=play]")
    page.wait_for_timeout(1500)
    page.click("[data-clock=play]")   # pause

    page.reload()
    expect(page.locator("[data-conn-text]")).to_have_text("connected")
    page.click("#tab-x-events")
    lines = page.locator("[data-log=list] li[data-kind=high_watermark_advanced]")
    expect(lines.first).to_be_attached()
    line = lines.first
    step, seq = int(line.get_attribute("data-step")), int(line.get_attribute("data-seq"))
    line.click()

    expect(page.locator("[data-clock-root]")).to_have_attribute("data-step", str(step))
    model = page.request.get(f"/lab/{session_id}/model.json").json()
    assert model["step"] == step and model["seq"] == seq + 1 or model["seq"] > seq   # the event happened
    # ...and the charts came back from the server's series.
    page.click("#tab-x-charts")
    expect(page.locator("[data-chart=rate] .main-svg").first).to_be_attached()


def test_a_command_after_a_rewind_asks_first_and_can_be_undone(page: Page) -> None:
    new_session(page, seed=5, name="future")
    create_topic(page, "t", partitions=1)
    page.click("#tab-c-produce")
    page.locator("form[data-form=produce] [name=count]").fill("3")
    for _ in range(3):
        page.locator("form[data-form=produce] button[type=submit]").click()
        page.click("[data-clock=step]")
    expect(page.locator("[data-clock=marks] .mark")).to_have_count(4)
    marks = page.locator("[data-clock=marks] .mark")
    marks.nth(1).click()   # back to just after the first produce: two commands ahead
    expect(page.locator("[data-clock-root]")).to_have_attribute("data-future", "2")

    page.answer_dialogs = False
    page.locator("form[data-form=produce] button[type=submit]").click()
    page.wait_for_timeout(300)
    assert page.dialogs and "lie ahead" in page.dialogs[-1]
    expect(page.locator("[data-clock-root]")).to_have_attribute("data-future", "2")   # refused: nothing cut

    page.answer_dialogs = True
    page.locator("form[data-form=produce] button[type=submit]").click()
    expect(page.locator("[data-clock-root]")).to_have_attribute("data-future", "0")
    undo = page.locator("[data-clock=undo]")
    expect(undo).to_be_visible()
    undo.click()
    expect(page.locator("[data-clock-root]")).to_have_attribute("data-future", "2")
    expect(undo).to_be_hidden()


def test_loading_a_scenario_asks_before_it_replaces_the_session(page: Page) -> None:
    new_session(page, seed=6, name="replace")
    create_topic(page, "t", partitions=1)
    page.click("#tab-c-scenario")
    page.locator("[data-scenario-select] option[value='hw-truncation-story']").wait_for(state="attached")
    page.select_option("[data-scenario-select]", "hw-truncation-story")
    page.answer_dialogs = False
    page.locator("form[data-form=builtin-scenario] button[type=submit]").click()
    page.wait_for_timeout(300)
    assert any("replaces this session" in d for d in page.dialogs)
    expect(page.locator("[data-partition-summary='t-0']")).to_have_count(1)   # still the learner's cluster
