"""A learner builds a 3-broker cluster in the browser, produces, kills the leader, rewinds, and
opens a segment — against a real Daphne, in Debian's chromium.

The page's elements carry stable data-* attributes (data-replica rows with data-hw/-leo/-role,
data-partition-summary rows with data-leader/-isr), which is what the assertions read.
"""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import clock_step_until, create_topic, new_session, partition_summary

pytestmark = pytest.mark.e2e


def test_a_learner_sees_replication_failover_and_rewind(page: Page, shoot) -> None:
    new_session(page, brokers=3, seed=1, name="Failover walkthrough")

    # A topic with one partition on all three brokers.
    create_topic(page, "t", partitions=1, replication_factor=3)
    expect(page.locator("[data-partition-summary='t-0']")).to_have_count(1)
    expect(page.locator("[data-replica][data-topic=t]")).to_have_count(3)

    # Ten messages, acks=all; play until every replica's high watermark is 10.
    page.click("#tab-c-produce")
    produce = page.locator("form[data-form=produce]")
    produce.locator("[name=value]").fill("m")
    produce.locator("[name=count]").fill("10")
    produce.locator("[name=acks]").select_option("all")
    produce.locator("button[type=submit]").click()
    page.click("[data-clock=play]")
    expect(page.locator("[data-replica][data-topic=t][data-hw='10']")).to_have_count(3)
    page.click("[data-clock=play]")
    expect(page.locator("[data-clock-root]")).to_have_attribute("data-mode", "paused")
    for replica in page.locator("[data-replica][data-topic=t]").all():
        expect(replica).to_have_attribute("data-leo", "10")
        expect(replica.locator(".hw-marker")).to_have_attribute("data-hw", "10")
        expect(replica.locator(".cell[data-committed=true]")).to_have_count(10)
    before = partition_summary(page)
    assert before["hw"] == "10" and sorted(before["isr"].split(",")) == ["1", "2", "3"]
    old_leader = before["leader"]
    shoot("cluster-view")

    # Kill the leader of t-0, then step to the next leader election.
    page.click("#tab-c-faults")
    page.locator("form[data-form=kill-leader] [name=leader_of]").select_option("t-0")
    page.locator("form[data-form=kill-leader] button[type=submit]").click()
    expect(page.locator(f"[data-broker-id='{old_leader}']")).to_have_attribute("data-alive", "false")
    clock_step_until(page, "leader_elected")
    summary = page.locator("[data-partition-summary='t-0']")
    expect(summary).not_to_have_attribute("data-leader", old_leader)
    expect(summary).not_to_have_attribute("data-leader", "-1")
    after = partition_summary(page)
    assert len(after["isr"].split(",")) == 2 and old_leader not in after["isr"].split(","), after
    new_leader = after["leader"]
    expect(page.locator(f"[data-replica][data-broker='{new_leader}'][data-topic=t]")).to_have_attribute("data-role", "leader")
    shoot("failover")
    page.click("#tab-x-charts")
    expect(page.locator("[data-chart=isr] .main-svg").first).to_be_attached()
    shoot("charts", page.locator("[data-chart=isr]"))

    # Rewind: click the last event before the leader was killed; the old leader is back.
    page.click("#tab-x-events")
    lines = page.locator("[data-log=list] [data-kind]")
    expect(lines.first).to_be_visible()
    crash_seq = page.locator("[data-log=list] [data-kind=broker_crashed]").first.get_attribute("data-seq")
    before_crash = page.locator("[data-log=list] [data-kind]").evaluate_all(
        "(lines, crash) => lines.filter(l => Number(l.dataset.seq) < crash).map(l => l.dataset.seq).pop()", int(crash_seq))
    shoot("event-log", page.locator(".explore"))
    page.locator(f"[data-log=list] [data-seq='{before_crash}']").click()
    expect(summary).to_have_attribute("data-leader", old_leader)
    expect(page.locator(f"[data-broker-id='{old_leader}']")).to_have_attribute("data-alive", "true")
    expect(summary).to_have_attribute("data-isr", before["isr"])

    # Open a follower's segment: ten records, as DumpLogSegments prints them.
    follower = next(b for b in ("1", "2", "3") if b != old_leader)
    page.locator(f"[data-replica][data-broker='{follower}'][data-topic=t]").click()
    expect(page.locator("[data-replica-files]")).to_have_attribute("data-replica-files", f"{follower}:t:0")
    page.locator("[data-segment='00000000000000000000'] [data-open-file=log]").click()
    dump = page.locator("[data-dump]")
    expect(dump).to_have_attribute("data-records", "10")
    expect(dump.locator(".dump-line[data-kind=record]")).to_have_count(10)
    page.locator("[data-lookup-form] [name=offset]").fill("7")
    page.locator("[data-lookup-form] button[type=submit]").click()
    lookup = page.locator("[data-lookup='7']")
    expect(lookup.locator("[data-record-offset='7']")).to_be_attached()
    expect(lookup).not_to_have_class(re.compile("animating"), timeout=20_000)  # the lookup animation ran to its end
    shoot("segment-view", page.locator(".explore"), from_top=True)

    # The message browser: committed records of t-0.
    page.click("#tab-x-messages")
    expect(page.locator("[data-messages-partition='0']")).to_have_attribute("data-count", "10")
    expect(page.locator("[data-committed-note]")).to_contain_text("Committed records only")
    shoot("message-browser", page.locator(".explore"))

    assert page.errors == []
