"""A learner plays the log-compaction scenario to its first cleaning and opens the replica's
"before and after" in the Segments panel — against a real Daphne, in Debian's chromium."""
from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import new_session

pytestmark = pytest.mark.e2e


def test_a_learner_sees_a_cleaning_before_and_after(page: Page, shoot) -> None:
    new_session(page, brokers=1, seed=151, name="Compaction")
    page.click("#tab-c-scenario")
    page.locator("[data-scenario-select] option[value=log-compaction]").wait_for(state="attached")
    page.select_option("[data-scenario-select]", "log-compaction")
    page.locator("form[data-form=builtin-scenario] button[type=submit]").click()
    scenario = page.locator("[data-clock=scenario]")
    expect(scenario).to_contain_text("log-compaction")
    for step in range(1, 13):           # up to the first cleaning (step 12: run_until log_cleaned)
        page.click("[data-clock=step]")
        expect(scenario).to_have_attribute("data-next-step", str(step))

    page.locator("[data-replica][data-broker='1'][data-topic=t]").click()
    expect(page.locator("[data-replica-files]")).to_have_attribute("data-replica-files", "1:t:0")
    page.locator("[data-open-cleaning]").click()
    view = page.locator("[data-cleaning='1:t:0']")
    expect(view).to_have_attribute("data-end-offset", "8")
    before = view.locator("[data-cleaning-side=before]")
    after = view.locator("[data-cleaning-side=after]")
    expect(before.locator(".cl-record")).to_have_count(8)
    expect(before.locator(".cl-record.removed")).to_have_count(4)
    expect(after.locator(".cl-record")).to_have_count(4)
    expect(after.locator(".cl-record.tombstone")).to_have_count(1)
    expect(after.locator("[data-gap='0-3']")).to_be_visible()
    view.scroll_into_view_if_needed()
    shoot("cleaning-before-after", view)
