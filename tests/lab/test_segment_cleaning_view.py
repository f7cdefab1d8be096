"""A visitor plays the log-compaction scenario and opens a replica's last cleaning in the Segments
panel: the records before it (what the cleaner read, captured by the engine) beside the log now,
removed ones and tombstones marked, gaps shown, and the cleaning's numbers (lab/views_cleaning.py).

Each cleaning is checked against the engine: "before" is exactly the log's records of the cleaned
range as read just before the step that cleaned, "after" the log's records of that range now, and
the numbers those of the step's `log_cleaned` event."""
from __future__ import annotations

import html
import re

import pytest
from django.test import Client

from engine.cluster import EPOCH_MS
from engine.scenarios.runner import load_scenario
from tests.lab.test_explore_views import LabRun, lab_run  # noqa: F401  (the fixture: a real engine session)

pytestmark = pytest.mark.django_db

Row = tuple[int, str, str | None]     # offset, key, value (None: a tombstone)


def _log_records(run: LabRun) -> list[Row]:
    log = run.host.cluster.brokers[1].partitions[("t", 0)].log
    return [(r.offset, r.key.decode(), None if r.value is None else r.value.decode()) for r in log.records_from(0)]


def _side(page: str, name: str) -> dict:
    block = re.search(rf'<section class="cleaning-side" data-cleaning-side="{name}">(.*?)</section>', page, re.S)
    assert block, f"no {name} side in the view"
    body = block.group(1)
    records, retained = [], []
    for attrs, cells in re.findall(r'<tr class="cl-record[^"]*" ([^>]*)>(.*?)</tr>', body, re.S):
        data = dict(re.findall(r'data-([a-z]+)="([^"]*)"', attrs))
        key = html.unescape(re.search(r'<code class="cl-key">(.*?)</code>', cells).group(1))
        value = re.search(r'<code class="cl-value">(.*?)</code>', cells)
        assert (value is None) == (data["tombstone"] == "true") == ("cl-tombstone" in cells)
        records.append((int(data["offset"]), key, None if value is None else html.unescape(value.group(1))))
        retained.append(data["retained"] == "true")
    return {"records": records, "retained": retained, "html": body,
            "gaps": re.findall(r'data-gap="(\d+-\d+)"', body),
            "batches": re.findall(r'data-batch="(\d+-\d+)"(?: data-outcome="(\w+)")?', body),
            "segments": re.findall(r'<tr class="cl-segment" data-segment="(\d{20})"', body)}


def _numbers(page: str) -> dict[str, str]:
    return {name: re.sub(r"<[^>]+>|\s+", "", value) for name, value in
            re.findall(r'<dd data-number="(\w+)">(.*?)</dd>', page, re.S)}


def _play_until_cleaned(run: LabRun) -> tuple[list[Row], object]:
    """Step the scenario until a step cleans t-0 on broker 1; the log's records as the cleaning
    found them — those read just before that step, then those the step appended before it cleaned
    (each `records_appended` event lists its records) — and the step's log_cleaned event."""
    while True:
        before = _log_records(run) if ("t", 0) in run.host.cluster.brokers[1].partitions else []
        events = run.host.step().events
        cleaned = [i for i, e in enumerate(events) if e.kind == "log_cleaned"]
        if cleaned:
            assert len(cleaned) == 1
            for e in events[:cleaned[0]]:
                if e.kind == "records_appended" and (e.broker, e.topic, e.partition) == (1, "t", 0):
                    assert len(e.records) == e.records_count
                    before += [(r["offset"], r["key"], r["value"]) for r in e.records]
            return before, events[cleaned[0]]
        assert not run.host.clock()["scenario"]["done"], "the scenario ended without another cleaning"


def _check_against_the_engine(client: Client, run: LabRun, before: list[Row], event) -> dict:
    response = client.get(run.url("segments/cleaning/"), {"replica": "1:t:0"})
    assert response.status_code == 200, response.content
    page = response.content.decode()
    shown_before, shown_after = _side(page, "before"), _side(page, "after")
    end = event.end_offset
    assert shown_before["records"] == [r for r in before if r[0] < end]
    now = [r for r in _log_records(run) if r[0] < end]
    assert shown_after["records"] == now
    # What the cleaner kept is what the log holds now; the rest is marked removed.
    assert [r for r, kept in zip(shown_before["records"], shown_before["retained"]) if kept] == now
    assert all(shown_after["retained"])
    assert _numbers(page) == {
        "checkpoint": f"{event.first_dirty_offset}→{event.end_offset}", "dirty_ratio": f"{event.dirty_ratio:.4g}",
        "records": f"{event.records_before}→{event.records_after}",
        "bytes": f"{event.bytes_before}→{event.bytes_after}",
        "segments": f"{event.segments_cleaned}→{event.segments_after}",
        "tombstones_removed": str(event.tombstones_removed), "delete_horizons_set": str(event.delete_horizons_set)}
    assert f'data-end-offset="{end}"' in page and f'data-first-dirty-offset="{event.first_dirty_offset}"' in page
    assert f"holds {end} for this replica now" in page           # the cleaner-offset-checkpoint file on disk
    return {"before": shown_before, "after": shown_after, "page": page}


def test_it_shows_each_cleaning_of_the_log_compaction_scenario_before_and_after(
        client: Client, lab_run: LabRun) -> None:  # noqa: F811
    lab_run.host.load_scenario(load_scenario("log-compaction"))
    lab_run.host.step()                              # create_topic
    panel = client.get(lab_run.url("segments/"), {"replica": "1:t:0"}).content.decode()
    assert "data-open-cleaning" not in panel
    assert client.get(lab_run.url("segments/cleaning/"), {"replica": "1:t:0"}).status_code == 400

    before, event = _play_until_cleaned(lab_run)
    first = _check_against_the_engine(client, lab_run, before, event)
    assert first["before"]["records"] == [(0, "a", "a1"), (1, "b", "b1"), (2, "a", "a2"), (3, "c", "c1"),
                                          (4, "b", "b2"), (5, "a", "a3"), (6, "c", None), (7, "d", "d1")]
    assert first["before"]["retained"] == [False] * 4 + [True] * 4
    assert first["before"]["segments"] == ["0" * 20, "0" * 19 + "4"]
    assert [outcome for _, outcome in first["before"]["batches"]] == ["removed"] * 4 + ["copied"] * 2 + \
        ["rewritten", "copied"]                      # the tombstone's batch is written again with a delete horizon
    assert first["after"]["gaps"] == ["0-3"]         # segment 0 is left empty: its offsets are gone, not moved
    after_html = first["after"]["html"]
    assert after_html.index('data-segment="' + "0" * 20) < after_html.index('data-gap="0-3"') < \
        after_html.index('data-segment="' + "0" * 19 + "4")       # the gap sits in the emptied segment 0
    cleaned_ms = lab_run.host.cluster.brokers[1].cleaner.last_cleaning[("t", 0)].cleaned_ms - EPOCH_MS
    assert f"at t = {cleaned_ms / 1000:.3f} s" in first["page"]
    assert f"delete horizon t = {(cleaned_ms + 60_000) / 1000:.3f} s" in first["after"]["html"]   # delete.retention.ms
    panel = client.get(lab_run.url("segments/"), {"replica": "1:t:0"}).content.decode()
    assert 'data-last-cleaning="8"' in panel and "data-open-cleaning" in panel

    before, event = _play_until_cleaned(lab_run)
    second = _check_against_the_engine(client, lab_run, before, event)
    assert event.tombstones_removed == 1
    tombstone = second["before"]["records"].index((6, "c", None))
    assert second["before"]["retained"][tombstone] is False        # the tombstone, past its horizon, removed
    assert (6, "c", None) not in second["after"]["records"]
    assert second["before"]["segments"] == ["0" * 20, "0" * 19 + "4", "0" * 19 + "8", "0" * 18 + "12"]
    assert second["before"]["gaps"] == ["0-3"]       # the empty segment 0 the first cleaning left, as read
    assert second["after"]["gaps"] == ["0-7", "9-10", "12-12", "14-14"]


def test_a_replica_that_was_never_cleaned_says_so(client: Client, lab_run: LabRun) -> None:  # noqa: F811
    lab_run.apply("create_topic", topic="t", partitions=1, replication_factor=3)
    response = client.get(lab_run.url("segments/cleaning/"), {"replica": "2:t:0"})
    assert response.status_code == 400
    assert "has not cleaned t-0 since it started" in response.content.decode()


def test_it_speaks_chinese_when_the_visitor_chose_it(client: Client, lab_run: LabRun, settings) -> None:  # noqa: F811
    lab_run.host.load_scenario(load_scenario("log-compaction"))
    _play_until_cleaned(lab_run)
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    panel = client.get(lab_run.url("segments/"), {"replica": "1:t:0"}).content.decode()
    page = client.get(lab_run.url("segments/cleaning/"), {"replica": "1:t:0"}).content.decode()
    assert "清理前后对比" in panel and "上一次清理" in panel
    assert "之前：清理器读到的内容" in page and "之后：日志现在的样子" in page and "墓碑" in page
    assert "Before: what the cleaner read" not in page
