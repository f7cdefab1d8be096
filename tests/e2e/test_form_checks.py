"""The control forms refuse what the browser can tell is wrong before sending it — at the field,
with aria-invalid and a message, plus a toast — and nothing is clamped: a count over this
session's limit (which the page gets from the server) is refused, not cut down."""
from __future__ import annotations

import json

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import create_topic, new_session

pytestmark = pytest.mark.e2e

SPY_ON_COMMANDS = """() => {
  const socket = window.kafkaLab.socket;
  const command = socket.command.bind(socket);
  window.sentCommands = [];
  socket.command = (name, args) => { window.sentCommands.push(name); return command(name, args); };
}"""


def _sent(page: Page) -> list[str]:
    return page.evaluate("window.sentCommands")


def test_the_produce_form_refuses_a_count_over_the_limit_at_the_field(page: Page, shoot) -> None:
    new_session(page, brokers=3, seed=2, name="Form checks")
    create_topic(page, "t", partitions=1, replication_factor=3)
    expect(page.locator("[data-partition-summary='t-0']")).to_have_count(1)
    page.evaluate(SPY_ON_COMMANDS)
    limit = json.loads(page.locator("#lab-limits").text_content())["max_records_per_s"]

    page.click("#tab-c-produce")
    form = page.locator("form[data-form=produce]")
    count = form.locator("[name=count]")
    count.fill(str(limit + 1))
    form.locator("button[type=submit]").click()

    expect(count).to_have_attribute("aria-invalid", "true")
    note = form.locator("[data-field-error=count]")
    expect(note).to_have_text(f"One command may produce at most {limit} records in this lab session, not {limit + 1}.")
    expect(count).to_have_attribute("aria-describedby", note.get_attribute("id"))
    expect(page.locator(".toast-error").last).to_contain_text(f"Count: One command may produce at most {limit}")
    shoot("form-check-count", form)
    assert _sent(page) == []

    # Changing the field takes the message away; a count within the limit goes out whole.
    count.fill("4")
    expect(note).to_have_count(0)
    expect(count).not_to_have_attribute("aria-invalid", "true")
    form.locator("button[type=submit]").click()
    page.click("[data-clock=play]")
    expect(page.locator("[data-replica][data-topic=t]").first).to_have_attribute("data-leo", "4")
    assert _sent(page) == ["produce"]


def test_the_links_form_refuses_a_link_from_a_node_to_itself(page: Page) -> None:
    new_session(page, brokers=3, seed=2, name="Self link")
    page.evaluate(SPY_ON_COMMANDS)

    page.click("#tab-c-faults")
    form = page.locator("form[data-form=links]")
    form.locator("[name=a]").select_option("broker-2")
    form.locator("[name=b]").select_option("broker-2")
    form.locator("[data-command=partition_network]").click()

    expect(form.locator("[name=b]")).to_have_attribute("aria-invalid", "true")
    expect(form.locator("[data-field-error=b]")).to_contain_text("A link joins two different nodes")
    expect(page.locator(".toast-error").last).to_contain_text("A link joins two different nodes")
    assert _sent(page) == []

    form.locator("[name=b]").select_option("broker-3")
    expect(form.locator("[data-field-error=b]")).to_have_count(0)
    form.locator("[data-command=partition_network]").click()
    page.wait_for_function("window.sentCommands.length === 1")
    assert _sent(page) == ["partition_network"]


def test_a_server_refusal_shows_at_the_form_too(page: Page) -> None:
    new_session(page, brokers=3, seed=2, name="Server refusal")

    create_topic(page, "t", partitions=1, replication_factor=5)   # more replicas than brokers

    field = page.locator("form[data-form=create-topic] [name=replication_factor]")
    expect(field).to_have_attribute("aria-invalid", "true")
    expect(page.locator("form[data-form=create-topic] [data-field-error=replication_factor]")).to_contain_text(
        "INVALID_REPLICATION_FACTOR")
