"""The lab explains itself, in a real browser: a landing card opens its scenario, the scenario's
notes follow every Step, the page says what it is waiting for (with a countdown) and what a
truncation really lost, and the two truncation modes compare in one click."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import create_topic, new_session

pytestmark = pytest.mark.e2e


def open_card(page: Page, card: str) -> None:
    page.goto("/")
    page.click(f"a[data-card={card}]")
    expect(page.locator("[data-start-note]")).to_be_visible()
    page.click("form.lab-form [type=submit]")
    page.wait_for_url(re.compile(r"/lab/[0-9a-f-]{36}/\?"))
    expect(page.locator("[data-conn-text]")).to_have_text("connected")


def test_the_failures_card_opens_the_truncation_story_and_its_notes_follow_each_step(page: Page, shoot) -> None:
    open_card(page, "failures")
    scenario = page.locator("[data-clock=scenario]")
    expect(scenario).to_contain_text("hw-truncation-story")
    expect(page.locator("#tab-c-scenario")).to_have_attribute("aria-selected", "true")
    assert page.dialogs == []                       # a brand-new session: loaded without asking
    page.wait_for_url(re.compile(r"/lab/[0-9a-f-]{36}/$"))   # acted on once: the options are gone
    note = page.locator("[data-clock=note]")
    expect(note).to_contain_text("Press Step to play step 1 of 18")

    for step in range(1, 11):                        # to step 10: A (the leader) dies
        page.click("[data-clock=step]")
        expect(scenario).to_have_attribute("data-next-step", str(step))
        expect(note.locator(".note-main")).to_contain_text(f"Step {step} of 18")
        expect(page.locator("[data-clock=last]")).to_contain_text("Step")
    expect(note.locator(".note-main")).to_contain_text("A dies with m1..m6")

    # Broker 1 is down: the page says what it waits for, and for how long.
    timers = page.locator("[data-clock=timers]")
    expect(timers).to_be_visible()
    expiry = timers.locator("[data-timer=session_expiry]")
    expect(expiry).to_contain_text("broker 1's ZooKeeper session expires")
    expect(expiry.locator("[data-countdown]")).to_have_text("in 18.0 s")
    expect(timers).to_contain_text("zookeeper.session.timeout.ms = 18 s")
    if page.locator("[data-broker-id='1'][data-controller=true]").count():   # broker 1 was also the controller
        expect(page.locator("[data-broker-id='1'] .badge-svg.controller")).to_have_text("controller (down)")
        expect(page.locator("[data-broker-id='1'] .badge-svg.controller-notice")).to_contain_text("notices in 18.0 s")
    shoot("waiting-for-zookeeper")

    page.click("[data-clock=step]")                  # run 20 s: the session expires, B is elected
    expect(timers.locator("[data-timer=session_expiry]")).to_have_count(0)
    expect(timers.locator("[data-timer=isr_shrink]")).to_contain_text("broker 3 leaves the ISR of t-0")
    for _ in range(7):
        page.click("[data-clock=step]")
    expect(scenario).to_have_attribute("data-done", "true")
    expect(note.locator(".note-main")).to_contain_text("Finished. Step 18 of 18")

    # m5 was truncated and fetched back; only m6 is lost.
    story = page.locator("[data-truncations] li[data-broker='1']")
    expect(story).to_have_attribute("data-lost", "1")
    expect(story.locator("[data-fate=lost]")).to_contain_text("m6")
    expect(story.locator("[data-fate=refetched]")).to_contain_text("m5")
    expect(page.locator("[data-truncations] h2")).to_contain_text("What was lost")
    cells = page.locator("[data-replica][data-broker='1'][data-topic=t]")
    expect(cells.locator("[data-truncated-offset='4']")).to_have_count(0)   # no ✕ over the refetched m5
    shoot("truncation-fates", page.locator("[data-truncations]"))


def test_live_play_moves_the_scenario_label(page: Page) -> None:
    open_card(page, "replication")
    scenario = page.locator("[data-clock=scenario]")
    expect(scenario).to_have_attribute("data-next-step", "0")
    page.locator("[data-clock=speed]").fill("1")
    page.click("[data-clock=play]")
    expect(scenario).not_to_have_attribute("data-next-step", "0")
    expect(scenario).to_have_attribute("data-done", "true", timeout=60_000)
    expect(scenario).to_contain_text("all 11 steps played")


def test_the_log_card_opens_a_topic_made_for_the_segment_view(page: Page) -> None:
    open_card(page, "log")
    expect(page.locator("#tab-x-segments")).to_have_attribute("aria-selected", "true")
    expect(page.locator("[data-clock=scenario]")).to_have_attribute("data-done", "true", timeout=30_000)
    expect(page.locator("[data-replica][data-topic=log]").first).to_have_attribute("data-leo", "40")
    page.select_option("[data-segments-replica]", index=1)
    expect(page.locator("[data-segment]").nth(2)).to_be_attached()     # several 1 KiB segments


def test_compare_both_modes_in_one_click(page: Page, shoot) -> None:
    new_session(page, brokers=2, seed=3, name="Compare")
    page.click("#tab-c-scenario")
    page.locator("[data-scenario-select] option[value=kip101-data-loss]").wait_for(state="attached")
    page.select_option("[data-scenario-select]", "kip101-data-loss")
    page.click("[data-compare-modes]")
    dialog = page.locator("[data-compare-dialog]")
    expect(dialog).to_be_visible()
    expect(dialog.locator("[data-mode=high-watermark] [data-verdict=lost]")).to_contain_text("m2")
    expect(dialog.locator("[data-mode=leader-epoch] [data-verdict=kept]")).to_be_visible()
    shoot("compare-truncation-modes", dialog)
    page.click("[data-compare-close]")
    expect(dialog).to_be_hidden()

    page.click("[data-play-mode=leader-epoch]")      # the same story, played in the other mode
    expect(page.locator("[data-clock=scenario]")).to_contain_text("kip101-data-loss (leader-epoch)")
    expect(page.locator("[data-meta=truncation]")).to_have_text("leader-epoch")


def test_produce_while_paused_says_why_nothing_moves(page: Page) -> None:
    new_session(page, brokers=3, seed=1, name="Paused")
    create_topic(page, "t", partitions=1, replication_factor=3)
    expect(page.locator("[data-partition-summary='t-0']")).to_have_count(1)
    page.click("#tab-c-produce")
    page.locator("form[data-form=produce] button[type=submit]").click()
    expect(page.locator("[data-clock=last]")).to_contain_text("nothing moves while paused")
    page.click("[data-clock=step]")
    expect(page.locator("[data-clock=last]")).to_contain_text("Step")


def test_a_replica_clicked_while_a_refresh_is_in_flight_opens(page: Page) -> None:
    # The panel's refresh answers late; the learner clicks a replica in the picture meanwhile. The
    # click must win whatever order the answers land in (with htmx's hx-sync the late answer
    # replaced the form and dropped the request queued on it: the panel stayed on "choose").
    new_session(page, brokers=3, seed=1, name="Late refresh")
    create_topic(page, "t", partitions=1, replication_factor=3)
    expect(page.locator("[data-replica][data-topic=t]")).to_have_count(3)
    page.click("#tab-x-segments")
    expect(page.locator("[data-segments-replica] option[value='2:t:0']")).to_be_attached()

    held = []

    def slow_plain_refresh(route) -> None:
        if "replica=" in route.request.url:
            route.continue_()
        else:
            held.append(route)   # answered only after the click's answer has been drawn

    page.route(re.compile(r"/explore/segments/(\?.*)?$"), slow_plain_refresh)
    page.locator("[data-segments-form] button[type=submit]").click()   # Refresh, with no replica chosen
    page.wait_for_timeout(100)
    assert held, "the refresh was sent"
    page.locator("[data-replica][data-broker='2'][data-topic=t]").click()
    expect(page.locator("[data-replica-files]")).to_have_attribute("data-replica-files", "2:t:0")
    for route in held:
        route.continue_()
    page.wait_for_timeout(500)
    expect(page.locator("[data-replica-files]")).to_have_attribute("data-replica-files", "2:t:0")
    expect(page.locator("[data-segments-replica]")).to_have_value("2:t:0")
