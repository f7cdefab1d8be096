"""The landing page's four "try it" cards each open their own thing: the card's link carries its
start options through the new-session form to the session page's address (which the page acts
on once: static/js/start-options.js)."""
from __future__ import annotations

import copy
import re
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from engine.scenarios.runner import load_scenario
from lab.models import LabSession

pytestmark = pytest.mark.django_db

CARDS = {
    "log": {"open": ["segments"], "tab": ["x-segments"]},
    "replication": {"scenario": ["isr-shrink-expand"], "tab": ["c-scenario,x-charts"]},
    "failures": {"scenario": ["hw-truncation-story"], "tab": ["c-scenario"]},
    "groups": {"scenario": ["group-member-joins"], "tab": ["c-consumers,x-group"]},
}


@pytest.fixture(autouse=True)
def lab_settings(settings: Settings, tmp_path: Path) -> None:
    settings.KAFKA_LAB_DATA_DIR = tmp_path / "labs"
    stub_dir = tmp_path / "templates"
    (stub_dir / "lab").mkdir(parents=True)
    (stub_dir / "lab" / "session.html").write_text("session page of {{ session.name }}")
    templates = copy.deepcopy(settings.TEMPLATES)
    templates[0]["DIRS"] = [stub_dir, *templates[0]["DIRS"]]
    settings.TEMPLATES = templates


def card_links(client: Client) -> dict[str, str]:
    html = client.get("/").content.decode()
    return {card: href.replace("&amp;", "&")
            for href, card in re.findall(r'<a class="badge ready" href="([^"]+)" data-card="([a-z]+)"', html)}


def hidden_fields(html: str) -> dict[str, str]:
    return dict(re.findall(r'<input type="hidden" name="(scenario|open|tab)" value="([^"]*)">', html))


def test_each_card_links_to_the_new_session_form_with_its_own_start_options(client: Client) -> None:
    links = card_links(client)
    assert set(links) == set(CARDS)
    for card, href in links.items():
        url = urlsplit(href)
        assert url.path == "/lab/new" and parse_qs(url.query) == CARDS[card], card


@pytest.mark.parametrize("card", sorted(CARDS))
def test_a_card_creates_a_session_that_opens_with_its_options(client: Client, card: str) -> None:
    href = card_links(client)[card]
    form = client.get(href)
    html = form.content.decode()
    assert form.status_code == 200
    expected = {name: values[0] for name, values in CARDS[card].items()}
    assert hidden_fields(html) == expected
    assert "data-start-note" in html
    data = {name: re.search(rf'name="{name}"[^>]*value="([^"]*)"', html).group(1) for name in ("name", "brokers", "seed")}
    truncation = re.search(r'<option value="([a-z-]+)" selected>', html).group(1)
    if "scenario" in expected:    # the form starts from the scenario's own cluster
        cluster = load_scenario(expected["scenario"])["cluster"]
        assert (int(data["brokers"]), int(data["seed"]), truncation) == \
            (cluster.get("brokers", 3), cluster.get("seed", 0), cluster.get("truncation", "leader-epoch"))
    response = client.post("/lab/new", {**data, "truncation": truncation, "config": "", **expected})
    assert response.status_code == 302
    target = urlsplit(response["Location"])
    session = LabSession.objects.get(pk=target.path.split("/")[2])
    assert target.path == f"/lab/{session.id}/" and parse_qs(target.query) == CARDS[card]
    assert client.get(response["Location"]).status_code == 200


def test_start_options_a_link_cannot_use_are_dropped(client: Client) -> None:
    html = client.get("/lab/new?scenario=no-such-story&open=everything&tab=c-scenario,evil,x-events").content.decode()
    assert hidden_fields(html) == {"tab": "c-scenario,x-events"}
    response = client.post("/lab/new", {"name": "x", "brokers": 3, "seed": 1, "truncation": "leader-epoch",
                                        "config": "", "scenario": "../etc", "open": "x"})
    assert response.status_code == 302 and "?" not in response["Location"]


def test_the_plain_form_carries_nothing(client: Client) -> None:
    html = client.get("/lab/new").content.decode()
    assert hidden_fields(html) == {} and "data-start-note" not in html
