"""The consumer flow does not mislead: a rebalance that waits says for whom and until when, its
phases light up in order, a crashed consumer leaves the picker but stays a member until its
session times out, earliest reads what was produced before the join, and a coordinator failover
shows the group's last known state rather than "Unknown, generation -1"."""
from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import clock_step_until, create_topic, new_session

pytestmark = pytest.mark.e2e

OFFSETS = '{"offsets.topic.num.partitions": 3}'   # Kafka's 50 partitions are the same protocol, more traffic


def _join(page: Page, consumer: str, *, topics: str = "t", group: str = "g", manual: bool = False,
          reset: str | None = None) -> None:
    page.click("#tab-c-consumers")
    form = page.locator("form[data-form=consumer-join]")
    form.locator("[name=member]").fill(consumer)
    form.locator("[name=group]").fill(group)
    form.locator("[name=topics]").fill(topics)
    form.locator("[name=assignor]").select_option("range")
    form.locator(f"[name=poll_mode][value={'manual' if manual else 'auto'}]").check()
    if reset:
        form.locator("[name='auto.offset.reset']").select_option(reset)
    form.locator("button[type=submit]").click()


def _play(page: Page, speed: str = "0") -> None:
    page.locator("[data-clock=speed]").fill(speed)
    if page.locator("[data-clock-root]").get_attribute("data-mode") != "live":
        page.click("[data-clock=play]")
    expect(page.locator("[data-clock-root]")).to_have_attribute("data-mode", "live")


def _pause(page: Page) -> None:
    if page.locator("[data-clock-root]").get_attribute("data-mode") != "paused":
        page.click("[data-clock=play]")
    expect(page.locator("[data-clock-root]")).to_have_attribute("data-mode", "paused")


def _stable(page: Page, generation: int, group: str = "g") -> None:
    card = page.locator(f"[data-group='{group}']")
    expect(card).to_have_attribute("data-generation", str(generation), timeout=60_000)
    expect(card).to_have_attribute("data-state", "Stable", timeout=60_000)


def _record_phases(page: Page, group: str = "g") -> None:
    """Note every phase the group's panel shows, in order (what a learner would have seen)."""
    page.evaluate("""(group) => {
      window.phasesSeen = [];
      let last = null;
      clearInterval(window.phaseWatch);
      window.phaseWatch = setInterval(() => {
        const now = document.querySelector(`[data-group='${group}'] .phases`)?.dataset.phaseNow ?? null;
        if (now !== last) { window.phasesSeen.push(now); last = now; }
      }, 15);
    }""", group)


def _setup(page: Page, name: str, partitions: int = 3) -> None:
    new_session(page, brokers=3, seed=4, name=name, config=OFFSETS)
    create_topic(page, "t", partitions=partitions, replication_factor=2)
    expect(page.locator("[data-partition-summary]")).to_have_count(partitions)
    page.click("#tab-x-group")


def test_a_rebalance_says_who_it_waits_for_and_its_phases_light_up_in_order(page: Page, shoot) -> None:
    _setup(page, "Rebalance phases")
    _record_phases(page)
    _join(page, "c1")
    _play(page)
    _stable(page, 1)
    _pause(page)
    # The first rebalance went through its phases one after the other.
    expect(page.locator("[data-group='g'] .phases")).not_to_have_attribute("data-animating", "true")
    seen = [p for p in page.evaluate("window.phasesSeen") if p]
    assert seen == ["join", "sync", "assign"], seen

    _join(page, "c2")
    expect(page.locator("[data-clock=running]")).to_contain_text("consumer_join")
    clock_step_until(page, "group_state_changed")
    card = page.locator("[data-group='g']")
    expect(card).to_have_attribute("data-state", "PreparingRebalance")
    # While the rebalance waits: JoinGroup is the current phase, and the panel says who rejoined,
    # who is awaited (and how it will rejoin), and until when.
    expect(card.locator(".phases")).to_have_attribute("data-phase-now", "join")
    wait = card.locator("[data-group-wait=rebalance]")
    expect(wait).to_contain_text("Sent: c2 (new member)")
    expect(wait).to_contain_text("Awaited: c1 — polls by itself")
    expect(wait).to_contain_text(re.compile(r"waits until t = [\d.]+ s \(in 300 s\)"))
    expect(card.locator("[data-member-name=c1]")).to_have_attribute("data-member-status", "awaited")
    expect(card.locator("[data-member-name=c2]")).to_have_attribute("data-member-status", "joined")
    shoot("consumer-group-waiting", page.locator(".explore"))

    # One step of the clock runs the rest of the rebalance: the panel still plays it in order.
    _record_phases(page)
    clock_step_until(page, "rebalance_completed")
    expect(card).to_have_attribute("data-state", "Stable")
    expect(card.locator(".phases")).to_have_attribute("data-phase-now", "assign")
    expect(card.locator(".phases")).not_to_have_attribute("data-animating", "true")
    assert [p for p in page.evaluate("window.phasesSeen") if p] == ["join", "sync", "assign"]
    expect(card.locator("[data-group-wait]")).to_have_count(0)
    expect(card.locator("[data-member]")).to_have_count(2)
    # c1 gave up t-2: the group's events say so in a learner's words.
    _play(page)
    expect(card.locator(".group-events")).to_contain_text(re.compile(r"c1 \(group g, generation 2\) now owns \[t-0, t-1\]"
                                                                     r" · kept t-0, t-1 · gave up \(revoked\) t-2"), timeout=30_000)
    assert [e for e in page.errors if e.startswith("uncaught")] == []


def test_a_crashed_consumer_leaves_the_picker_and_stays_a_member_until_its_session_times_out(page: Page, shoot) -> None:
    _setup(page, "Crashed member")
    _join(page, "c1")
    _play(page)
    _stable(page, 1)
    _join(page, "c2")
    _stable(page, 2)
    _pause(page)
    picker = page.locator("form[data-form=consumer-actions] [name=member]")
    expect(picker.locator("option")).to_have_text(["c1", "c2"])

    picker.select_option("c2")
    page.click("form[data-form=consumer-actions] [data-command=consumer_crash]")
    # It can no longer act: gone from the picker. But the coordinator does not know yet.
    expect(picker.locator("option")).to_have_text(["c1"])
    card = page.locator("[data-group='g']")
    c2 = card.locator("[data-member-name=c2]")
    expect(c2).to_have_attribute("data-member-status", "crashed")
    expect(c2).to_contain_text(re.compile(r"crashed, still a member until its session times out( in [\d.]+ s)?"))
    if page.evaluate("(window.kafkaLab.app.view.timers || []).some((t) => t.kind === 'member_session')"):
        expect(c2).to_contain_text(re.compile(r"times out in [\d.]+ s"))
    expect(card).to_have_attribute("data-generation", "2")
    shoot("consumer-group-crashed-member", page.locator(".explore"))

    # After session.timeout.ms the coordinator removes c2, and c1 owns every partition.
    _play(page, speed="1")
    _stable(page, 3)
    expect(card.locator("[data-member]")).to_have_count(1)
    expect(card.locator("[data-member-name=c1]")).to_contain_text("t-0, t-1, t-2")

    # Leaving frees c1 too: the picker is empty, the group Empty.
    _pause(page)
    picker.select_option("c1")
    page.click("form[data-form=consumer-actions] [data-command=consumer_leave]")
    _play(page)
    expect(card).to_have_attribute("data-state", "Empty", timeout=30_000)
    expect(picker.locator("option")).to_have_text(["no consumers yet"])
    expect(card.locator("[data-group-wait=empty]")).to_contain_text("no members")
    assert [e for e in page.errors if e.startswith("uncaught")] == []


def test_earliest_reads_records_produced_before_the_join(page: Page) -> None:
    _setup(page, "Earliest", partitions=1)
    page.click("#tab-c-produce")
    page.locator("form[data-form=produce] [name=count]").fill("5")
    page.locator("form[data-form=produce] button[type=submit]").click()
    _play(page)
    expect(page.locator("[data-partition-summary='t-0']")).to_have_attribute("data-hw", "5", timeout=30_000)

    form = page.locator("form[data-form=consumer-join]")
    page.click("#tab-c-consumers")
    expect(form.locator("[name='auto.offset.reset']")).to_have_value("latest")     # Kafka's default
    expect(form.locator("[data-reset-why]")).to_contain_text("Kafka's default")
    _join(page, "c1", reset="earliest")
    _join(page, "c2", group="late", reset="latest")
    _play(page)
    _stable(page, 1)
    _stable(page, 1, group="late")
    page.click("#tab-x-events")
    log = page.locator("[data-log=list]")
    expect(log).to_contain_text("c1: t-0 reset to 0 (earliest)", timeout=30_000)
    expect(log).to_contain_text("c1 polled 5 record(s): t-0 0..4", timeout=30_000)
    expect(log).to_contain_text("c2: t-0 reset to 5 (latest)")
    expect(log).not_to_contain_text("c2 polled")

    # The form says what it can at its fields: a name still running, a topic that does not exist.
    _pause(page)
    _join(page, "c1")
    expect(form.locator("[data-field-error=member]")).to_contain_text("already a running consumer")
    _join(page, "c3", topics="nope")
    expect(form.locator("[data-field-note=topics]")).to_contain_text("“nope” does not exist yet")
    # A consumer that only polls when told to: no interval to give.
    form.locator("[name=poll_mode][value=manual]").check()
    expect(form.locator("[name=poll_every_ms]")).to_be_disabled()
    assert [e for e in page.errors if e.startswith("uncaught")] == []


def test_a_coordinator_failover_shows_the_last_known_state(page: Page, shoot) -> None:
    _setup(page, "Coordinator failover")
    _join(page, "c1")
    _play(page)
    _stable(page, 1)
    _pause(page)
    card = page.locator("[data-group='g']")
    coordinator = card.get_attribute("data-coordinator")

    page.click("#tab-c-faults")
    page.locator("form[data-form=broker-faults] [name=broker]").select_option(coordinator)
    page.click("form[data-form=broker-faults] [data-command=kill_broker]")
    expect(card).to_have_attribute("data-state", "Unknown")
    expect(card).to_have_attribute("data-last-known", "Stable")
    expect(card.locator("[data-pill=state]")).to_have_text("last known state: Stable")
    expect(card.locator("[data-pill=generation]")).to_have_text("last known generation 1")
    expect(card).not_to_contain_text("generation -1")
    expect(card.locator("[data-group-wait=coordinator]")).to_contain_text(f"Coordinator broker {coordinator} is down")
    expect(card.locator("[data-member-name=c1]")).to_contain_text("t-0, t-1, t-2")
    shoot("consumer-group-coordinator-down", page.locator(".explore"))

    # The controller moves __consumer_offsets' leadership; the new coordinator loads the group.
    _play(page, speed="1")
    expect(card).to_have_attribute("data-state", "Stable", timeout=60_000)
    expect(card).not_to_have_attribute("data-last-known", re.compile(".*"))
    expect(card).to_have_attribute("data-generation", "1")
    assert card.get_attribute("data-coordinator") != coordinator
    assert [e for e in page.errors if e.startswith("uncaught")] == []


def test_a_member_that_polls_only_when_told_holds_the_rebalance_until_you_press_poll(page: Page) -> None:
    _setup(page, "Manual poll")
    _join(page, "c1", manual=True)
    _play(page)
    _stable(page, 1)
    # Its Join is a first poll(): it returns when records come or its timeout (15 s) passes.
    expect(page.locator("[data-clock=running]")).to_be_hidden(timeout=30_000)
    _join(page, "c2")
    card = page.locator("[data-group='g']")
    expect(card).to_have_attribute("data-state", "PreparingRebalance", timeout=30_000)
    expect(card.locator("[data-group-wait=rebalance]")).to_contain_text("Awaited: c1 — polls only when you press Poll")
    page.wait_for_timeout(4000)      # heartbeats go on, but only poll() rejoins
    expect(card).to_have_attribute("data-state", "PreparingRebalance")
    picker = page.locator("form[data-form=consumer-actions] [name=member]")
    picker.select_option("c1")
    for _ in range(8):
        page.click("form[data-form=consumer-actions] [data-command=consumer_poll]")
        page.wait_for_timeout(1500)
        if card.get_attribute("data-generation") == "2":
            break
    _stable(page, 2)
    assert [e for e in page.errors if e.startswith("uncaught")] == []
