"""Issue 15: a KRaft session in the browser. The Metadata panel shows the controller quorum; the
dedicated controllers are drawn as nodes beside the brokers; after the active controller is killed
the panel shows the new Raft leader and its epoch — exactly what /lab/<id>/model.json says — and
the page's whole model equals the server's."""
from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from tests.e2e.helpers import create_topic, new_session
from tests.e2e.test_page_is_exact import page_model, server_model, summary

pytestmark = pytest.mark.e2e


def panel(page: Page) -> dict:
    """What the Metadata panel shows: the active controller and epoch, and each voter's row."""
    return page.evaluate("""() => {
      const summary = document.querySelector('[data-metadata-view] .metadata-summary');
      const voters = Array.from(document.querySelectorAll('[data-metadata-view] tr[data-voter]')).map((row) => ({
        id: Number(row.dataset.voter), state: row.dataset.state, epoch: Number(row.dataset.epoch),
        leader: Number(row.dataset.leader)}));
      return {mode: summary.dataset.metadataMode, active: Number(summary.dataset.activeController),
              epoch: summary.dataset.quorumEpoch === '' ? null : Number(summary.dataset.quorumEpoch), voters,
              records: document.querySelectorAll('[data-metadata-view] [data-record-offset]').length};
    }""")


def settle(page: Page, session_id: str) -> dict:
    """Paused: the page at the server's step; returns the server's model."""
    model = server_model(page, session_id)
    page.wait_for_function("(s) => window.kafkaLab.app.view.step === s", arg=model["step"])
    return model


def test_the_metadata_panel_follows_a_controller_failover(page: Page, shoot) -> None:
    session_id = new_session(page, seed=2, name="kraft failover", metadata="kraft", controllers="dedicated")
    expect(page.locator("[data-controller-node]")).to_have_count(3)
    create_topic(page, "t", partitions=1)
    expect(page.locator("[data-partition-summary='t-0']")).to_have_count(1)
    page.click("#tab-x-metadata")
    expect(page.locator("[data-metadata-view] tr[data-voter]")).to_have_count(3)
    model = settle(page, session_id)
    first = model["metadata"]["active_controller"]
    assert first in (101, 102, 103)
    summary_line = page.locator("[data-metadata-view] .metadata-summary")
    expect(summary_line).to_have_attribute("data-active-controller", str(first))
    expect(page.locator(f"[data-controller-node='{first}']")).to_have_attribute("data-active", "true")

    page.click("#tab-c-faults")
    page.locator("form[data-form=kill-leader] button[data-command=kill_controller]").click()
    expect(page.locator(f"[data-controller-node='{first}']")).to_have_attribute("data-alive", "false")
    page.evaluate("window.kafkaLab.socket.clock('play', {speed: 10})")
    page.wait_for_function("""(first) => {
      const active = window.kafkaLab.app.view.metadata?.active_controller;
      return active !== undefined && active >= 0 && active !== first;
    }""", arg=first, timeout=30_000)
    page.evaluate("window.kafkaLab.socket.clock('pause')")
    page.wait_for_timeout(300)

    model = settle(page, session_id)
    metadata = model["metadata"]
    leader = next(v for v in metadata["voters"] if v["active"])
    assert metadata["active_controller"] == leader["id"] != first and leader["epoch"] > 1
    page.wait_for_function("""([active, epoch]) => {
      const s = document.querySelector('[data-metadata-view] .metadata-summary');
      return s && s.dataset.activeController === String(active) && s.dataset.quorumEpoch === String(epoch);
    }""", arg=[leader["id"], leader["epoch"]])
    shown = panel(page)
    assert shown["mode"] == "kraft"
    assert (shown["active"], shown["epoch"]) == (metadata["active_controller"], leader["epoch"])
    assert shown["voters"] == [{"id": v["id"], "state": v["state"], "epoch": v["epoch"], "leader": v["leader"]}
                               for v in metadata["voters"]]
    assert next(v for v in shown["voters"] if v["id"] == first)["state"] == "down"
    assert shown["records"] == len(model["metadata_records"]) > 0
    expect(page.locator(f"[data-controller-node='{leader['id']}']")).to_have_attribute("data-active", "true")
    got, expected = page_model(page), summary(model)
    for key in expected:
        assert got[key] == expected[key], f"the page's {key} differs from the engine's at step {expected['step']}"
    shoot("kraft-metadata", page.locator("#x-metadata"), from_top=True)
    shoot("kraft-cluster")
    assert not page.errors, page.errors
