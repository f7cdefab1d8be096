"""A learner joins two consumers to a group and watches the partitions split between them.

Skipped until the engine's scenario steps include the consumer commands (`consumer_join`, …,
docs/lab-protocol.md): the page sends consumer_join as {"member", "group", "topics"}.
"""
from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from engine.scenarios.runner import STEPS
from tests.e2e.helpers import create_topic, new_session

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif("consumer_join" not in STEPS, reason="the engine has no consumer_join step yet"),
]


def _join(page: Page, consumer: str, group: str = "g", topics: str = "t") -> None:
    """Join `consumer` as an application polling every 200 ms (so it takes part in rebalances)."""
    form = page.locator("form[data-form=consumer-join]")
    form.locator("[name=member]").fill(consumer)
    form.locator("[name=group]").fill(group)
    form.locator("[name=topics]").fill(topics)
    form.locator("[name=assignor]").select_option("range")
    form.locator("[name=poll_every_ms]").fill("200")
    form.locator("button[type=submit]").click()


def test_two_consumers_split_a_topics_partitions(page: Page, shoot) -> None:
    # Three __consumer_offsets partitions instead of Kafka's 50: the same protocol, less traffic.
    new_session(page, brokers=3, seed=4, name="Consumer group", config='{"offsets.topic.num.partitions": 3}')
    create_topic(page, "t", partitions=2, replication_factor=2)
    expect(page.locator("[data-partition-summary]")).to_have_count(2)
    page.click("#tab-c-consumers")
    page.click("#tab-x-group")

    _join(page, "c1")
    # Joining is a consumer blocked in poll() until its group is stable: the clock runs it.
    expect(page.locator("[data-clock=running]")).to_contain_text("consumer_join")
    page.click("[data-clock=play]")
    group = page.locator("[data-group='g']")
    expect(group).to_have_attribute("data-state", "Stable", timeout=60_000)
    expect(group.locator("[data-member]")).to_have_count(1)
    _join(page, "c2")

    expect(group).to_have_attribute("data-generation", "2", timeout=60_000)
    expect(group).to_have_attribute("data-state", "Stable", timeout=60_000)
    page.click("[data-clock=play]")
    members = group.locator("[data-member]")
    expect(members).to_have_count(2)
    expect(group.locator("[data-member]:has-text('t-0')")).to_have_count(1)
    expect(group.locator("[data-member]:has-text('t-1')")).to_have_count(1)
    expect(group.locator("[data-group-partition]")).to_have_count(2)

    # Twelve records without a key: Kafka's default sticky partitioner (KIP-794) keeps them on one
    # partition (it moves on after batch.size bytes), so one consumer gets all twelve. It polls them
    # and auto-commits: the committed offsets add up to 12 and every lag goes back to 0.
    page.click("#tab-c-produce")
    page.locator("form[data-form=produce] [name=count]").fill("12")
    page.locator("form[data-form=produce] button[type=submit]").click()
    page.locator("[data-clock=speed]").fill("1")
    page.click("[data-clock=play]")
    page.wait_for_function("""() => {
      const rows = Array.from(document.querySelectorAll("[data-group='g'] [data-group-partition]"));
      const committed = rows.map((row) => Number(row.dataset.committed || 0)).sort((a, b) => a - b);
      return rows.length === 2 && rows.every((row) => row.dataset.lag === "0") && committed.join() === "0,12";
    }""", timeout=60_000)
    page.click("[data-clock=play]")
    shoot("consumer-group", page.locator(".explore"))
    page.click("#tab-x-charts")
    expect(page.locator("[data-chart=lag] .main-svg").first).to_be_attached()
    shoot("charts-consumers", page.locator(".explore"))
    assert [e for e in page.errors if e.startswith("uncaught")] == []
