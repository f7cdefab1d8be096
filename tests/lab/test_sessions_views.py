"""A visitor creates, lists, opens, resets and deletes lab sessions — only their own."""
from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from django.test import Client
from pytest_django.fixtures import Settings

from lab.models import LabCommand, LabSession

pytestmark = pytest.mark.django_db

STUB_SESSION_PAGE = "session page of {{ session.name }} at {{ ws_url }}"


@pytest.fixture(autouse=True)
def lab_settings(settings: Settings, tmp_path: Path) -> None:
    settings.KAFKA_LAB_DATA_DIR = tmp_path / "labs"
    # lab/session.html belongs to the browser side of the lab: stand in for it, first in the search path.
    stub_dir = tmp_path / "templates"
    (stub_dir / "lab").mkdir(parents=True)
    (stub_dir / "lab" / "session.html").write_text(STUB_SESSION_PAGE)
    templates = copy.deepcopy(settings.TEMPLATES)
    templates[0]["DIRS"] = [stub_dir, *templates[0]["DIRS"]]
    settings.TEMPLATES = templates


def create(client: Client, **fields: object) -> LabSession:
    data = {"name": "my lab", "brokers": 3, "seed": 42, "truncation": "leader-epoch", "config": "", **fields}
    response = client.post("/lab/new", data)
    assert response.status_code == 302, response.content.decode()
    return LabSession.objects.get(pk=response["Location"].split("/")[2])


def test_the_new_session_form_shows_its_fields_and_limits(client: Client) -> None:
    response = client.get("/lab/new")

    html = response.content.decode()
    assert response.status_code == 200
    for name in ("name", "brokers", "seed", "truncation", "config"):
        assert f'name="{name}"' in html
    assert "at most 9 brokers, 64 partitions" in html
    assert not re.search(r'(src|href)="(https?:)?//', html)


def test_a_visitor_creates_a_session_they_own(client: Client) -> None:
    session = create(client, brokers=5, seed=7, truncation="high-watermark", config='{"min.insync.replicas": 2}')

    assert (session.name, session.brokers, session.seed, session.truncation) == ("my lab", 5, 7, "high-watermark")
    # the metadata mode goes into the config: KRaft unless the form says otherwise (issue 15)
    assert session.config == {"min.insync.replicas": 2, "metadata": "kraft", "controller.mode": "combined"}
    assert session.owner == client.session.session_key
    assert session.generation == 1 and session.commands.count() == 0


@pytest.mark.parametrize(("fields", "message"), [
    ({"brokers": 10}, "at most 9 brokers"),
    ({"brokers": 0}, "greater than or equal to 1"),
    ({"truncation": "sometimes"}, "Select a valid choice"),
    ({"seed": -1}, "greater than or equal to 0"),
    ({"name": ""}, "This field is required"),
    ({"config": "{not json"}, "Not valid JSON"),
    ({"config": "[1, 2]"}, "The config is a JSON object"),
    ({"config": '{"no.such.setting": 1}'}, "Unknown cluster config"),
])
def test_the_form_shows_what_is_wrong(client: Client, fields: dict, message: str) -> None:
    data = {"name": "my lab", "brokers": 3, "seed": 42, "truncation": "leader-epoch", "config": "", **fields}

    response = client.post("/lab/new", data)

    assert response.status_code == 400
    assert message in response.content.decode()
    assert LabSession.objects.count() == 0


def test_the_list_shows_only_the_visitors_own_sessions(client: Client) -> None:
    mine = create(client, name="mine")
    other = Client()
    create(other, name="someone else's")

    response = client.get("/lab/sessions")

    html = response.content.decode()
    assert response.status_code == 200
    assert "mine" in html and "someone else" not in html
    assert f'href="/lab/{mine.id}/"' in html
    assert "replaying" in html  # it says how a session survives a restart
    assert "no lab sessions yet" in Client().get("/lab/sessions").content.decode()


def test_opening_a_session_renders_the_session_page(client: Client) -> None:
    session = create(client)

    response = client.get(f"/lab/{session.id}/")

    assert response.status_code == 200
    assert response.content.decode() == f"session page of my lab at ws://testserver/ws/lab/{session.id}/?session={session.id}"
    assert response.context["session"] == session
    assert response.context["ws_url"] == f"ws://testserver/ws/lab/{session.id}/?session={session.id}"
    assert response.context["limits"]["max_brokers"] == 9


def test_another_visitors_session_is_not_found(client: Client) -> None:
    session = create(client)
    stranger = Client()
    stranger.get("/lab/new")

    assert stranger.get(f"/lab/{session.id}/").status_code == 404
    assert stranger.post(f"/lab/{session.id}/reset").status_code == 404
    assert stranger.post(f"/lab/{session.id}/delete").status_code == 404
    assert Client().get(f"/lab/{session.id}/").status_code == 404
    assert LabSession.objects.filter(pk=session.id).exists()


def test_reset_starts_a_new_generation_and_keeps_the_old_one(client: Client) -> None:
    session = create(client, brokers=3, seed=1)
    LabCommand.objects.create(session=session, index=0, at_step=7, at_time_ms=4, command="create_topic",
                              args={"topic": "t"}, tag=0)

    response = client.post(f"/lab/{session.id}/reset", {"brokers": 4})
    session.refresh_from_db()

    assert response.status_code == 302 and response["Location"] == f"/lab/{session.id}/"
    assert (session.generation, session.brokers, session.seed) == (2, 4, 1)
    assert session.history == [{"generation": 1, "brokers": 3, "seed": 1, "truncation": "leader-epoch",
                                "config": {"metadata": "kraft", "controller.mode": "combined"}}]
    assert session.commands.get().generation == 1
    assert client.post(f"/lab/{session.id}/reset", {"brokers": 12}).status_code == 400
    assert client.get(f"/lab/{session.id}/reset").status_code == 405


def test_delete_removes_the_session_and_its_log(client: Client, settings: Settings) -> None:
    session = create(client)
    LabCommand.objects.create(session=session, index=0, at_step=7, at_time_ms=4, command="create_topic",
                              args={"topic": "t"}, tag=0)
    data_dir = Path(settings.KAFKA_LAB_DATA_DIR) / str(session.id) / "run-1"
    data_dir.mkdir(parents=True)

    response = client.post(f"/lab/{session.id}/delete")

    assert response.status_code == 302 and response["Location"] == "/lab/sessions"
    assert not LabSession.objects.exists() and not LabCommand.objects.exists()
    assert not data_dir.parent.exists()


def test_the_url_names_are_stable(client: Client) -> None:
    from django.urls import reverse

    session = create(client)
    assert reverse("session_new") == "/lab/new"
    assert reverse("session_list") == "/lab/sessions"
    assert reverse("session_open", args=[session.id]) == f"/lab/{session.id}/"
    assert reverse("session_reset", args=[session.id]) == f"/lab/{session.id}/reset"
    assert reverse("session_delete", args=[session.id]) == f"/lab/{session.id}/delete"
    assert json.loads(json.dumps(session.info()))["id"] == str(session.id)


@pytest.mark.parametrize("debug", [True, False])
def test_a_session_that_is_not_yours_gets_the_labs_own_404_page(client: Client, settings: Settings,
                                                                 debug: bool) -> None:
    settings.DEBUG = debug
    session = create(client)
    stranger = Client()
    stranger.get("/lab/new")

    for response in (stranger.get(f"/lab/{session.id}/"), client.get("/lab/00000000-0000-0000-0000-000000000000/")):
        html = response.content.decode()
        assert response.status_code == 404
        assert "belongs to another browser" in html and "was deleted" in html
        assert '<a class="button-link" href="/lab/sessions">My sessions</a>' in html
        assert 'href="/lab/new">New session</a>' in html
        assert "Page not found at" not in html   # not Django's debug page
