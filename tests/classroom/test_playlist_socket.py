"""Playing a demo playlist in a broadcast: "next item" loads the scenario into the session for
every watcher, and its speaker notes reach the instructor's socket alone."""
from __future__ import annotations

from pathlib import Path

import pytest
from pytest_django.fixtures import Settings

from classroom.models import Broadcast, Playlist
from tests.classroom.broadcast_helpers import account, broadcast, cookie_of, open_tab, run_async, watch_path

pytestmark = pytest.mark.django_db(transaction=True)
NOTES = ["SECRET-NOTE-first: ask what HW means", "SECRET-NOTE-second"]


@pytest.fixture(autouse=True)
def lab_settings(settings: Settings, tmp_path: Path) -> None:
    settings.KAFKA_LAB_DATA_DIR = tmp_path / "labs"
    settings.KAFKA_LAB_IDLE_HOST_TTL_S = 0


def test_next_item_loads_the_scenario_and_its_notes_never_reach_a_watcher() -> None:
    teacher, ann = account("teacher", instructor=True), account("ann")
    row = broadcast(teacher)
    inline = {"name": "tiny", "cluster": {"brokers": 2, "seed": 5},
              "steps": [{"create_topic": {"topic": "x", "partitions": 1, "replication_factor": 2}}]}
    row.playlist = Playlist.objects.create(owner=teacher, name="demo", items=[
        {"title": "Loss", "scenario": "kip101-data-loss", "inline": None, "notes": NOTES[0]},
        {"title": "Tiny", "scenario": "", "inline": inline, "notes": NOTES[1]}])
    row.save()
    teacher_cookie, ann_cookie = cookie_of(teacher), cookie_of(ann)

    async def scenario() -> dict:
        panel = await open_tab(watch_path(row), teacher_cookie)
        watcher = await open_tab(watch_path(row), ann_cookie)
        anonymous = await open_tab(watch_path(row), None)
        out = {}
        await panel.send(id=1, type="next_item")
        out["first"] = await panel.until("playlist_item")
        out["hello"] = await watcher.until("hello")
        await panel.send(id=2, type="next_item")
        out["second"] = await panel.until("playlist_item")
        out["hello2"] = await watcher.until("hello")
        await panel.send(id=3, type="next_item")
        out["past_end"] = await panel.until("error")
        await watcher.send(id=4, type="next_item")
        out["watcher_refused"] = await watcher.until("error")
        for tab in (watcher, anonymous, panel):
            await tab.drain()
            await tab.close()
        out["watcher_texts"] = watcher.texts + anonymous.texts
        return out

    out = run_async(scenario)

    assert (out["first"]["index"], out["first"]["title"], out["first"]["notes"]) == (0, "Loss", NOTES[0])
    assert out["hello"]["clock"]["scenario"]["name"] == "kip101-data-loss"
    assert out["second"]["notes"] == NOTES[1] and out["hello2"]["session"]["brokers"] == 2
    assert "last item" in out["past_end"]["message"]
    assert out["watcher_refused"]["kafka_error"] == "NOT_CONTROLLER"
    assert len(out["watcher_texts"]) > 4
    assert not [t for t in out["watcher_texts"] if "SECRET-NOTE" in t or "playlist_item" in t]
    assert Broadcast.objects.get().playlist_index == 1
