"""Fixtures for the lessons core: an editable copy of lesson 13 (to build broken lessons from a
working one) and the scenario lesson 13 plays, run to the end or stopped part-way, with its events
as query items (the way lessons/player.py collects them)."""
from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from engine.cluster import Cluster
from engine.inspect.cluster import cluster_state
from engine.scenarios.runner import load_scenario, run_scenario
from lessons import queries
from lessons.schema import LESSONS_DIR

LESSON_13 = Path(LESSONS_DIR) / "13-hw-truncation-story"
STORY = "hw-truncation-story"


class LessonCopy:
    """Lesson 13's folder copied into a temporary directory, with helpers to break it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @property
    def path(self) -> str:
        return str(self.folder)

    def data(self) -> dict:
        return json.loads((self.folder / "lesson.json").read_text(encoding="utf-8"))

    def edit(self, change: Callable[[dict], Any]) -> None:
        data = self.data()
        change(data)
        self.write_json(json.dumps(data, ensure_ascii=False, indent=1))

    def write_json(self, text: str) -> None:
        (self.folder / "lesson.json").write_text(text, encoding="utf-8")

    def prose(self, language: str) -> str:
        return (self.folder / f"{language}.md").read_text(encoding="utf-8")

    def write_prose(self, language: str, text: str) -> None:
        (self.folder / f"{language}.md").write_text(text, encoding="utf-8")

    def drop_section(self, language: str, heading: str) -> None:
        """Remove the heading line and its body (up to the next heading)."""
        lines, out, dropping = self.prose(language).splitlines(), [], False
        assert heading in lines, f"{heading!r} is not in {language}.md"
        for line in lines:
            if line.startswith("#"):
                dropping = line == heading
            if not dropping:
                out.append(line)
        self.write_prose(language, "\n".join(out) + "\n")

    def append_prose(self, text: str, languages: tuple[str, ...] = ("en", "zh")) -> None:
        for language in languages:
            self.write_prose(language, self.prose(language).rstrip("\n") + "\n\n" + text.strip("\n") + "\n")


def beat(data: dict, beat_id: str) -> dict:
    """The beat `beat_id` of a lesson.json document."""
    return next(b for b in data["beats"] if b["id"] == beat_id)


@pytest.fixture
def lesson_copy(tmp_path: Path) -> LessonCopy:
    folder = tmp_path / LESSON_13.name
    shutil.copytree(LESSON_13, folder)
    return LessonCopy(folder)


@dataclass
class Played:
    """A real cluster after some of the story's steps, and every event it made, as query items."""
    cluster: Cluster
    events: list[dict]

    def world(self, beat_events: list[dict] | None = None) -> queries.World:
        return queries.World(self.cluster, self.events if beat_events is None else beat_events, self.events)

    def answer(self, query: dict) -> Any:
        queries.check(query)
        return queries.evaluate(query, self.world()).value

    def partition(self) -> dict:
        (partition,) = cluster_state(self.cluster)["partitions"]
        return partition

    def replica_state(self, broker: int) -> dict:
        return self.partition()["replica_states"][str(broker)]


def play_story(data_dir: Path, steps: int | None = None) -> Played:
    scenario = load_scenario(STORY)
    if steps is not None:
        scenario = dict(scenario, steps=scenario["steps"][:steps])
    events: list[dict] = []
    cluster, _result = run_scenario(scenario, str(data_dir),
                                    trace=lambda event: events.append(queries.event_item(event.to_dict())))
    return Played(cluster, events)


@pytest.fixture(scope="module")
def story(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """The whole story: A has come back, truncated and caught up."""
    return play_story(tmp_path_factory.mktemp("story"))


@pytest.fixture(scope="module")
def story_after_election(tmp_path_factory: pytest.TempPathFactory) -> Played:
    """Steps 0..10: A (broker 1) is dead, B (2) leads, both followers' fetchers are paused."""
    return play_story(tmp_path_factory.mktemp("story-after-election"), steps=11)
