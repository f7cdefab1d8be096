"""A lesson folder (lesson.json + en.md + zh.md) read into a Lesson: what the example lesson,
13-hw-truncation-story, becomes once loaded."""
from __future__ import annotations

from engine.scenarios.runner import load_scenario
from lessons import schema
from tests.lessons.conftest import LESSON_13, STORY, LessonCopy


def test_the_example_lesson_loads_with_its_beats_in_order() -> None:
    lesson = schema.load(str(LESSON_13))
    assert (lesson.slug, lesson.order) == ("hw-truncation-story", 13)
    assert [b.id for b in lesson.beats] == ["three-copies", "followers-stall", "kill-a", "election",
                                            "c-catches-up", "new-writes", "a-returns", "the-end"]
    assert [b.index for b in lesson.beats] == list(range(8))
    assert [b.id for b in lesson.questions] == ["three-copies", "followers-stall", "election", "c-catches-up",
                                                "a-returns", "the-end"]
    assert lesson.scenario_names == [STORY]


def test_only_the_first_beat_starts_the_scenario() -> None:
    lesson = schema.load(str(LESSON_13))
    assert [b.starts_scenario for b in lesson.beats] == [True] + [False] * 7


def test_a_beat_plays_its_range_of_the_scenarios_steps() -> None:
    lesson = schema.load(str(LESSON_13))
    steps = load_scenario(STORY)["steps"]
    assert lesson.beat("followers-stall").steps(lesson.scenarios[STORY]) == [(i, steps[i]) for i in range(3, 9)]


def test_a_do_beat_stands_for_the_steps_it_replaces() -> None:
    lesson = schema.load(str(LESSON_13))
    kill = lesson.beat("kill-a")
    assert kill.play is None and kill.do is not None
    assert kill.do.replaces == (9, 9)
    assert kill.steps(lesson.scenarios[STORY]) == [(9, load_scenario(STORY)["steps"][9])]


def test_a_beat_with_only_a_question_plays_no_steps() -> None:
    lesson = schema.load(str(LESSON_13))
    assert lesson.beat("the-end").steps(lesson.scenarios[STORY]) == []


def test_a_do_beats_instead_steps_play_outside_the_scenario(lesson_copy: LessonCopy) -> None:
    step = {"kill_broker": {"broker": 3}}
    lesson_copy.edit(lambda d: d["beats"].append({"id": "kill-c", "do": {"check": {"from": "brokers"},
                                                                         "instead": [step]}}))
    lesson_copy.append_prose("## beat: kill-c\nNow C.\n\n### do\nKill broker 3.")
    lesson = schema.load(lesson_copy.path)
    assert lesson.beat("kill-c").steps(lesson.scenarios[STORY]) == [(-1, step)]


def test_the_questions_parts_are_read_from_lesson_json() -> None:
    question = schema.load(str(LESSON_13)).beat("the-end").question
    assert question is not None
    assert question.kind == "choice"
    assert [(c.id, c.value) for c in question.choices] == [("a-m6", "m6"), ("b-m6-prime", "m6'"), ("c-m7", "m7")]
    assert question.hints == (schema.Hint("a-m6", "own-m6"),)
    assert question.expect == "b-m6-prime"


def test_both_languages_titles_are_the_first_lines_of_their_files() -> None:
    lesson = schema.load(str(LESSON_13))
    for language in ("en", "zh"):
        first = (LESSON_13 / f"{language}.md").read_text(encoding="utf-8").splitlines()[0]
        assert lesson.title(language) == first.removeprefix("# ")
        assert lesson.summary(language)


def test_a_copy_of_the_lesson_in_any_folder_named_like_a_lesson_loads(lesson_copy: LessonCopy) -> None:
    assert schema.load(lesson_copy.path).slug == "hw-truncation-story"


def test_lesson_folders_lists_only_folders_named_nn_slug(tmp_path) -> None:
    for name in ("01-first", "02-second", "notes", "3-short", "04-Capital"):
        (tmp_path / name).mkdir()
    (tmp_path / "05-a-file").write_text("")
    assert [p.rsplit("/", 1)[-1] for p in schema.lesson_folders(str(tmp_path))] == ["01-first", "02-second"]
