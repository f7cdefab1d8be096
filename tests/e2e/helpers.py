"""Steps the browser tests share: open a new lab session, read what the page shows."""
from __future__ import annotations

import re

from playwright.sync_api import Page, expect


def new_session(page: Page, *, brokers: int = 3, seed: int = 1, name: str = "browser test", config: str = "",
                metadata: str = "zookeeper", controllers: str = "combined") -> str:
    """Create a lab session through /lab/new; returns its id once the page is connected. The form
    chooses KRaft by default; these tests were written for ZooKeeper mode's pictures and keep it
    unless they ask for `metadata="kraft"`."""
    page.goto("/lab/new")
    page.fill("#id_name", name)
    page.fill("#id_brokers", str(brokers))
    page.fill("#id_seed", str(seed))
    page.select_option("#id_metadata", metadata)
    page.select_option("#id_controllers", controllers)
    page.fill("#id_config", config)
    page.click("form.lab-form [type=submit]")
    page.wait_for_url(re.compile(r"/lab/[0-9a-f-]{36}/$"))
    expect(page.locator("[data-conn-text]")).to_have_text("connected")
    expect(page.locator("[data-broker-id]")).to_have_count(brokers)
    return page.url.rstrip("/").rsplit("/", 1)[-1]


def create_topic(page: Page, topic: str = "t", partitions: int = 1, replication_factor: int = 3) -> None:
    page.click("#tab-c-topic")
    form = page.locator("form[data-form=create-topic]")
    form.locator("[name=topic]").fill(topic)
    form.locator("[name=partitions]").fill(str(partitions))
    form.locator("[name=replication_factor]").fill(str(replication_factor))
    form.locator("button[type=submit]").click()


def clock_step_until(page: Page, kind: str) -> None:
    page.locator(f"[data-clock=kind] option[value={kind}]").wait_for(state="attached")
    page.select_option("[data-clock=kind]", kind)
    page.click("[data-clock=step-until]")


def partition_summary(page: Page, label: str = "t-0") -> dict[str, str]:
    row = page.locator(f"[data-partition-summary='{label}']")
    return {"leader": row.get_attribute("data-leader"), "isr": row.get_attribute("data-isr"),
            "hw": row.get_attribute("data-hw")}
