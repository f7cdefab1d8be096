"""A demo playlist's items: checked when saved, turned into a scenario when played.

An item (`Playlist.items[i]`) is {"title", "scenario": a built-in's name or "", "inline": a
scenario object or null, "notes"}: exactly one of `scenario` and `inline`. An inline scenario is
checked as the lab's Scenario tab has it checked when loaded (engine.scenarios.runner.validate,
the lab's step cap, the session limits on its cluster's shape), so "next item" never fails on it
later. The notes are the instructor's alone: only the instructor's pages and socket get them.
"""
from __future__ import annotations

import json
from typing import Any

from django.utils.translation import gettext as _

from engine.scenarios.runner import ScenarioError, builtin_names, load_scenario, validate
from lab.host_types import MAX_SCENARIO_STEPS
from lab.limits import LimitExceeded, Limits

MAX_ITEMS = 50
MAX_TITLE_CHARS = 120
MAX_NOTES_CHARS = 4000
MAX_SCENARIO_BYTES = 60 * 1024   # what one socket frame may carry (lab.consumers.MAX_FRAME_BYTES)


class ItemError(ValueError):
    """Why an item cannot go in a playlist (said to the instructor)."""


def checked_scenario(scenario: Any) -> dict:
    """An uploaded scenario, checked whole (ItemError says what is wrong)."""
    if not isinstance(scenario, dict):
        raise ItemError(_("A scenario file holds one JSON object"))
    if len(json.dumps(scenario)) > MAX_SCENARIO_BYTES:
        raise ItemError(_("A scenario may be at most %(kib)s KiB") % {"kib": MAX_SCENARIO_BYTES // 1024})
    try:
        validate(scenario)
    except ScenarioError as error:
        raise ItemError(_("Not a valid scenario: %(error)s") % {"error": error}) from None
    if len(scenario["steps"]) > MAX_SCENARIO_STEPS:
        raise ItemError(_("A scenario has at most %(max)s steps") % {"max": MAX_SCENARIO_STEPS})
    cluster = scenario.get("cluster") or {}
    try:
        Limits.from_settings().check_shape(cluster.get("brokers", 3), cluster.get("seed", 0),
                                           cluster.get("truncation"), cluster.get("config"))
    except LimitExceeded as error:
        raise ItemError(str(error)) from None
    return scenario


def parse_upload(data: bytes) -> dict:
    if len(data) > MAX_SCENARIO_BYTES:
        raise ItemError(_("A scenario may be at most %(kib)s KiB") % {"kib": MAX_SCENARIO_BYTES // 1024})
    try:
        scenario = json.loads(data.decode("utf-8"), parse_constant=_not_a_number)
    except (UnicodeDecodeError, ValueError) as error:
        raise ItemError(_("Not valid JSON: %(error)s") % {"error": error}) from None
    return checked_scenario(scenario)


def new_item(title: str, notes: str, *, builtin: str = "", inline: dict | None = None) -> dict[str, Any]:
    title, notes = (title or "").strip(), (notes or "").strip()
    if len(title) > MAX_TITLE_CHARS:
        raise ItemError(_("A title has at most %(max)s characters") % {"max": MAX_TITLE_CHARS})
    if len(notes) > MAX_NOTES_CHARS:
        raise ItemError(_("Notes have at most %(max)s characters") % {"max": MAX_NOTES_CHARS})
    if bool(builtin) == (inline is not None):
        raise ItemError(_("Choose a built-in scenario or upload a scenario file (one of them)"))
    if builtin and builtin not in builtin_names():
        raise ItemError(_("No built-in scenario %(name)r") % {"name": builtin})
    if inline is not None:
        inline = checked_scenario(inline)
    name = builtin or str(inline.get("name") or "")
    return {"title": title or name or "—", "scenario": builtin, "inline": inline, "notes": notes}


def scenario_of(item: dict[str, Any]) -> dict:
    """The scenario an item loads (ItemError if it no longer can: a built-in gone)."""
    if item.get("inline") is not None:
        return checked_scenario(item["inline"])
    name = item.get("scenario") or ""
    if name not in builtin_names():
        raise ItemError(_("No built-in scenario %(name)r") % {"name": name})
    try:
        return load_scenario(name)
    except ScenarioError as error:
        raise ItemError(str(error)) from None


def _not_a_number(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")
