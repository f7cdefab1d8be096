"""Every built-in scenario and exercise scenario does exactly what it did: same events, same bytes.

The guard for refactors (issue 14): moving code must not change the event stream or the files a
scenario leaves. A deliberate bug fix that changes a digest rewrites `scenario_digests.json` with
`python -m engine.tools.scenario_digest --write` and names the fix in its commit.
"""
from __future__ import annotations

import json

import pytest

from engine.tools import scenario_digest

with open(scenario_digest.DIGEST_FILE, encoding="utf-8") as _f:
    RECORDED: dict[str, dict[str, str]] = json.load(_f)


def test_every_scenario_has_a_recorded_digest():
    assert sorted(RECORDED) == sorted(scenario_digest.scenario_paths())


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_scenario_events_and_files_are_unchanged(name):
    assert scenario_digest.digest(scenario_digest.scenario_paths()[name]) == RECORDED[name]
