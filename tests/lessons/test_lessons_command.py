"""`python manage.py lessons check [--json] [SLUG ...]` and `lessons list [--json] [SLUG ...]`, run on
lesson 13 only (the command reads the lessons under lessons/, and other lessons are being written
while this runs). A broken lesson's verdict is tested through catalog.check_folder, which the
command calls for each folder (test_checking_a_lesson_against_the_engine.py)."""
from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from engine.scenarios.runner import load_scenario
from lessons import catalog, schema
from tests.lessons.conftest import LESSON_13, STORY


def run(*args: str) -> str:
    out = io.StringIO()
    call_command("lessons", *args, stdout=out)
    return out.getvalue()


def test_check_json_gives_lesson_13s_verdict_and_answers() -> None:
    (verdict,) = json.loads(run("check", "hw-truncation-story", "--json"))
    assert verdict["lesson"] == "hw-truncation-story"
    assert verdict["ok"] is True
    assert verdict["problems"] == []
    assert verdict["questions"] == 6
    played = catalog.check(schema.load(str(LESSON_13))).run
    assert verdict["answers"] == played.answers()
    assert verdict["digest"] == played.digest


def test_a_lesson_may_be_named_with_its_number() -> None:
    (verdict,) = json.loads(run("check", "13-hw-truncation-story", "--json"))
    assert verdict["lesson"] == "hw-truncation-story"


def test_check_says_ok_per_lesson() -> None:
    assert run("check", "hw-truncation-story").strip() == "hw-truncation-story: 6 questions: ok"


def test_an_unknown_slug_is_an_error() -> None:
    with pytest.raises(CommandError, match="no lesson 'no-such-lesson'"):
        run("check", "no-such-lesson")


def test_an_unknown_action_is_refused() -> None:
    with pytest.raises(CommandError):
        run("play", "hw-truncation-story")


def test_list_json_describes_lesson_13() -> None:
    (row,) = json.loads(run("list", "hw-truncation-story", "--json"))
    data = json.loads((LESSON_13 / "lesson.json").read_text(encoding="utf-8"))
    titles = {lang: (LESSON_13 / f"{lang}.md").read_text(encoding="utf-8").splitlines()[0].removeprefix("# ")
              for lang in ("en", "zh")}
    assert row == {"slug": "hw-truncation-story", "order": 13, "title": titles, "follows": data["follows"],
                   "rows": data["rows"], "scenarios": [load_scenario(STORY)["name"]], "beats": len(data["beats"]),
                   "questions": sum(1 for b in data["beats"] if "question" in b),
                   "callouts": [c["id"] for c in data["callouts"]]}


def test_list_prints_one_line_per_lesson() -> None:
    (line,) = run("list", "hw-truncation-story").splitlines()
    assert line.startswith("13 hw-truncation-story: The HW truncation story")
    assert "6 questions, scenarios hw-truncation-story" in line
