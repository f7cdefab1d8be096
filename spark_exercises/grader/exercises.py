"""The exercises: one folder per exercise in spark_exercises/exercises/, the same files in each.

    NN-slug/README.md       the lesson it ties to (English, then a short Chinese summary)
    NN-slug/starter.ipynb   what a learner fills in: cells tagged "answer" hold `# YOUR CODE HERE`
    NN-slug/solution.ipynb  the same notebook answered (only the "answer" cells differ)
    NN-slug/scenario.json   the data: an engine scenario, played into a fresh lab before grading
    NN-slug/checks.py       the hidden checks: QUESTIONS, a list of grader.checks.Question

A notebook says which exercise it is in its metadata: {"kafka_lab": {"exercise": "NN-slug"}}.
"""
from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from engine.scenarios.runner import load_scenario
from spark_exercises.grader.checks import Question

EXERCISES_DIR = Path(__file__).resolve().parent.parent / "exercises"
FILES = ("README.md", "starter.ipynb", "solution.ipynb", "scenario.json", "checks.py")
SLUG = re.compile(r"^\d\d-[a-z0-9-]+$")
PUBLIC_FILES = ("README.md", "starter.ipynb", "scenario.json")   # what learners may download


class ExerciseError(Exception):
    """No such exercise, or an exercise folder that breaks the contract above."""


@dataclass(frozen=True)
class Exercise:
    slug: str
    path: Path

    @property
    def number(self) -> str:
        return self.slug.split("-", 1)[0]

    @cached_property
    def title(self) -> str:
        """The README's heading without its number: "# 05 · A compacted view" -> "A compacted view"."""
        for line in (self.path / "README.md").read_text(encoding="utf-8").splitlines():
            if line.startswith("# "):
                return line[2:].strip().removeprefix(f"{self.number} · ")
        return self.slug

    def readme(self) -> str:
        return (self.path / "README.md").read_text(encoding="utf-8")

    def scenario(self) -> dict:
        return load_scenario(str(self.path / "scenario.json"))

    @cached_property
    def questions(self) -> list[Question]:
        spec = importlib.util.spec_from_file_location(f"kafka_lab_checks_{self.slug.replace('-', '_')}",
                                                      self.path / "checks.py")
        if spec is None or spec.loader is None:
            raise ExerciseError(f"{self.slug}: cannot load checks.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        questions = getattr(module, "QUESTIONS", None)
        if not questions or not all(isinstance(q, Question) for q in questions):
            raise ExerciseError(f"{self.slug}: checks.py must define QUESTIONS, a list of Question")
        ids = [q.id for q in questions]
        if len(set(ids)) != len(ids):
            raise ExerciseError(f"{self.slug}: question ids repeat in checks.py")
        return list(questions)

    @property
    def max_score(self) -> int:
        return sum(q.points for q in self.questions)

    @property
    def answer_names(self) -> list[str]:
        names: list[str] = []
        for q in self.questions:
            names += [n for n in q.answers if n not in names]
        return names


def list_exercises(root: Path = EXERCISES_DIR) -> list[Exercise]:
    return [Exercise(p.name, p) for p in sorted(root.iterdir()) if p.is_dir() and SLUG.match(p.name)]


def find_exercise(name: str, root: Path = EXERCISES_DIR) -> Exercise:
    """By folder name ("01-partition-routing"), number ("01", "1") or slug without it ("partition-routing")."""
    wanted = name.strip().strip("/").rsplit("/", 1)[-1]
    for exercise in list_exercises(root):
        rest = exercise.slug.split("-", 1)[1]
        if wanted in (exercise.slug, rest) or (wanted.isdigit() and int(wanted) == int(exercise.number)):
            return exercise
    known = ", ".join(e.slug for e in list_exercises(root))
    raise ExerciseError(f"No exercise {name!r} (exercises: {known})")


def exercise_of(nb: dict) -> str | None:
    """The exercise a notebook names in its metadata, if any."""
    meta = nb.get("metadata", {}).get("kafka_lab", {})
    return meta.get("exercise") if isinstance(meta, dict) else None
