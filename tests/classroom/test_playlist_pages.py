"""Demo playlists: an instructor builds one — built-in scenarios and uploaded files, checked as the
lab's Scenario tab checks them — reorders, edits notes, removes; nobody else sees it."""
from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from classroom.models import Playlist
from tests.classroom.broadcast_helpers import account

pytestmark = pytest.mark.django_db

SCENARIO = {"name": "mine", "cluster": {"brokers": 3, "seed": 1},
            "steps": [{"create_topic": {"topic": "t", "partitions": 1, "replication_factor": 3}}]}


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_an_instructor_builds_reorders_and_edits_a_playlist() -> None:
    client = signed_in(account("teacher", instructor=True))
    created = client.post("/playlists/", {"name": "Monday"})
    pk = Playlist.objects.get().pk
    assert created["Location"] == f"/playlists/{pk}/"
    change = f"/playlists/{pk}/change"

    client.post(change, {"action": "add", "scenario": "kip101-data-loss", "title": "Loss", "notes": "say HW"})
    upload = SimpleUploadedFile("mine.json", json.dumps(SCENARIO).encode(), "application/json")
    client.post(change, {"action": "add", "file": upload, "title": "", "notes": "my own"})
    client.post(change, {"action": "up", "index": "1"})
    client.post(change, {"action": "edit", "index": "1", "title": "Loss again", "notes": "say LEO"})

    items = Playlist.objects.get().items
    assert [i["title"] for i in items] == ["mine", "Loss again"]
    assert items[0]["inline"] == SCENARIO and items[0]["scenario"] == ""
    assert items[1] == {"title": "Loss again", "scenario": "kip101-data-loss", "inline": None, "notes": "say LEO"}
    assert "say LEO" in client.get(f"/playlists/{pk}/").content.decode()
    client.post(change, {"action": "remove", "index": "0"})
    assert [i["title"] for i in Playlist.objects.get().items] == ["Loss again"]


@pytest.mark.parametrize("data, error", [
    ({"action": "add", "scenario": "no-such-scenario"}, "No built-in scenario"),
    ({"action": "add"}, "Choose a built-in scenario or upload a scenario file"),
    ({"action": "add", "file": b"{not json"}, "Not valid JSON"),
    ({"action": "add", "file": json.dumps({"steps": "x"}).encode()}, "Not a valid scenario"),
    ({"action": "add", "file": json.dumps({**SCENARIO, "cluster": {"brokers": 99}}).encode()}, "broker"),
    ({"action": "add", "file": b'{"steps": [], "x": NaN}'}, "not a number JSON allows"),
    ({"action": "add", "scenario": "kip101-data-loss", "notes": "n" * 5000}, "Notes have at most"),
    ({"action": "up", "index": "0"}, "No such item"),
    ({"action": "down", "index": "-1"}, "No such item"),
    ({"action": "launch"}, "Unknown action"),
])
def test_a_bad_change_is_refused_with_its_reason(data: dict, error: str) -> None:
    teacher = account("teacher", instructor=True)
    playlist = Playlist.objects.create(owner=teacher, name="p")
    if "file" in data:
        data = {**data, "file": SimpleUploadedFile("s.json", data["file"], "application/json")}

    answer = signed_in(teacher).post(f"/playlists/{playlist.pk}/change", data)

    assert answer.status_code == 400 and error in answer.content.decode()
    assert Playlist.objects.get().items == []


def test_a_playlist_is_its_owners_alone() -> None:
    teacher, other = account("teacher", instructor=True), account("other", instructor=True)
    playlist = Playlist.objects.create(owner=teacher, name="p", items=[])
    client = signed_in(other)
    assert client.get(f"/playlists/{playlist.pk}/").status_code == 404
    assert client.post(f"/playlists/{playlist.pk}/change", {"action": "delete"}).status_code == 404
    assert Playlist.objects.filter(pk=playlist.pk).exists()
