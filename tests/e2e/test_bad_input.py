"""A learner asks for impossible things; each time the server's message shows, in words and with
Kafka's error name, and the page keeps working."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import create_topic, new_session

pytestmark = pytest.mark.e2e


def _error_toast(page: Page):
    return page.locator(".toast-error").last


def _uncaught(page: Page) -> list[str]:
    return [e for e in page.errors if e.startswith("uncaught")]


def test_the_servers_errors_show_and_the_page_keeps_working(page: Page, shoot, tmp_path: Path) -> None:
    new_session(page, brokers=3, seed=2, name="Bad input")

    # More replicas than brokers: Kafka's INVALID_REPLICATION_FACTOR.
    create_topic(page, "t", partitions=1, replication_factor=5)
    expect(_error_toast(page)).to_contain_text("INVALID_REPLICATION_FACTOR")
    shoot("error-toast")

    # The same form, now valid, works.
    create_topic(page, "t", partitions=1, replication_factor=3)
    expect(page.locator("[data-partition-summary='t-0']")).to_have_count(1)

    # Killing a broker (a follower) that is already down.
    leader = page.locator("[data-partition-summary='t-0']").get_attribute("data-leader")
    follower = next(b for b in ("1", "2", "3") if b != leader)
    page.click("#tab-c-faults")
    faults = page.locator("form[data-form=broker-faults]")
    faults.locator("[name=broker]").select_option(follower)
    faults.locator("[data-command=kill_broker]").click()
    expect(page.locator(f"[data-broker-id='{follower}']")).to_have_attribute("data-alive", "false")
    faults.locator("[data-command=kill_broker]").click()
    expect(_error_toast(page)).to_contain_text("already down")

    # A message the protocol does not know.
    page.evaluate("window.kafkaLab.socket.send({type: 'teleport'})")
    expect(_error_toast(page)).to_contain_text("Unknown message type")

    # An offset the replica does not hold: said in the panel and in a toast.
    page.locator(f"[data-replica][data-broker='{leader}'][data-topic=t]").click()
    page.locator("[data-lookup-form] [name=offset]").fill("42")
    page.locator("[data-lookup-form] button[type=submit]").click()
    expect(page.locator("#segment-lookup [data-panel-error]")).to_contain_text("not in this replica's log")
    expect(_error_toast(page)).to_contain_text("OFFSET_OUT_OF_RANGE")

    # A scenario file that is not JSON never leaves the page.
    bad = tmp_path / "broken.json"
    bad.write_text("{ not json")
    page.click("#tab-c-scenario")
    page.locator("form[data-form=upload-scenario] [name=file]").set_input_files(str(bad))
    page.locator("form[data-form=upload-scenario] button[type=submit]").click()
    expect(_error_toast(page)).to_contain_text("broken.json is not valid JSON")

    # ... and one the engine rejects comes back as the server's error.
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"cluster": {"brokers": 3}, "steps": [{"fly": {}}]}))
    page.locator("form[data-form=upload-scenario] [name=file]").set_input_files(str(wrong))
    page.locator("form[data-form=upload-scenario] button[type=submit]").click()
    expect(_error_toast(page)).to_contain_text(re.compile("fly"))

    # Still connected, still producing (acks=1: the leader alone answers).
    expect(page.locator("[data-conn-text]")).to_have_text("connected")
    page.click("#tab-c-produce")
    page.locator("form[data-form=produce] [name=count]").fill("3")
    page.locator("form[data-form=produce] [name=acks]").select_option("1")
    page.locator("form[data-form=produce] button[type=submit]").click()
    page.click("[data-clock=play]")
    expect(page.locator(f"[data-replica][data-broker='{leader}'][data-topic=t]")).to_have_attribute("data-leo", "3")
    assert _uncaught(page) == []


def test_a_built_in_scenario_loads_and_steps(page: Page, shoot) -> None:
    new_session(page, brokers=3, seed=3, name="Scenario")
    page.click("#tab-c-scenario")
    page.locator("[data-scenario-select] option[value=hw-truncation-story]").wait_for(state="attached")
    page.select_option("[data-scenario-select]", "hw-truncation-story")
    page.locator("form[data-form=builtin-scenario] button[type=submit]").click()
    expect(page.locator("[data-clock=scenario]")).to_contain_text("hw-truncation-story")

    for _ in range(4):
        page.click("[data-clock=step]")
    expect(page.locator("[data-partition-summary='t-0']")).to_have_count(1)
    page.locator("[data-clock=speed]").fill("1")   # 10^1: ten times faster
    expect(page.locator("[data-clock=speed-out]")).to_have_text("10×")
    page.click("[data-clock=play]")
    expect(page.locator("[data-clock=scenario]")).to_have_attribute("data-done", "true", timeout=30_000)
    expect(page.locator("[data-truncations] li").first).to_be_attached()
    shoot("scenario-truncation")
    assert _uncaught(page) == []
