"""The Scenario tab's "Compare both modes": a built-in scenario run headless in leader-epoch and in
high-watermark truncation mode, the two end states side by side — checked against the scenario
runner's own results for each mode."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.test import Client

from engine.scenarios.runner import load_scenario, run_scenario
from lab.views_compare import compare

pytestmark = pytest.mark.django_db


def runner(name: str, mode: str, tmp_path: Path) -> dict:
    scenario = load_scenario(name)
    scenario["cluster"] = {**scenario.get("cluster", {}), "truncation": mode}
    cluster, result = run_scenario(scenario, str(tmp_path / mode))
    cluster.close()
    return result


def section(html: str, mode: str) -> str:
    start = html.index(f'data-mode="{mode}"')
    end = html.find('<section class="compare-run"', start)
    return html[start:end if end > 0 else None]


def held(result: dict) -> dict[tuple[int, int], str]:
    (partition,) = [p for p in result["partitions"] if p["topic"] == "t"]
    return {(int(b), r["offset"]): r["value"] for b, rep in partition["replica_states"].items() for r in rep["records"]}


def acknowledged_lost(result: dict) -> list[tuple[int, str]]:
    (partition,) = [p for p in result["partitions"] if p["topic"] == "t"]
    leader = {r["offset"]: r["value"] for r in partition["replica_states"][str(partition["leader"])]["records"]}
    return [(r["offset"], r["value"]) for r in result["produced"] if r["acked"] and leader.get(r["offset"]) != r["value"]]


def test_kip101_data_loss_loses_in_high_watermark_mode_what_leader_epoch_keeps(client: Client, tmp_path: Path) -> None:
    response = client.get("/lab/explore/scenarios/kip101-data-loss/compare/")
    assert response.status_code == 200
    html = response.content.decode()
    for mode in ("leader-epoch", "high-watermark"):
        result, shown = runner("kip101-data-loss", mode, tmp_path), section(html, mode)
        # Every replica's records, as the runner ends with them.
        cells = {(int(b), int(o)): v for b, row in re.findall(r'data-replica="(\d+)"(.*?)</tr>', shown, re.S)
                 for o, v in re.findall(r'class="rec[^"]*" data-offset="(\d+)" data-value="([^"]*)"', row)}
        assert cells == held(result), mode
        lost = acknowledged_lost(result)
        assert f'data-lost-acknowledged="{len(lost)}"' in shown
        for offset, _value in lost:
            assert f'data-acknowledged-lost="t-0:{offset}"' in shown
    hw, le = runner("kip101-data-loss", "high-watermark", tmp_path / "again"), runner("kip101-data-loss", "leader-epoch", tmp_path / "again")
    assert acknowledged_lost(hw) and not acknowledged_lost(le)            # the story itself
    assert set(acknowledged_lost(hw)) <= {(o, v) for (_, o), v in held(le).items()}   # what HW loses, LE keeps


def test_the_hw_story_shows_m5_fetched_back_and_m6_lost_in_high_watermark_mode(client: Client) -> None:
    html = client.get("/lab/explore/scenarios/hw-truncation-story/compare/").content.decode()
    hw = section(html, "high-watermark")
    assert 'data-fate="refetched" data-offset="4" data-value="m5"' in hw
    assert 'data-fate="lost" data-offset="5" data-value="m6"' in hw
    le = section(html, "leader-epoch")
    assert 'data-value="m5"' not in le.split("What it truncated")[1]   # leader-epoch mode never removed m5


def test_a_run_is_computed_once(client: Client) -> None:
    assert compare("kip101-data-loss") is compare("kip101-data-loss")


def test_an_unknown_scenario_is_not_found(client: Client) -> None:
    assert client.get("/lab/explore/scenarios/no-such-story/compare/").status_code == 404
