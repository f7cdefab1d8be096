"""A lesson that cannot be played is refused when it is loaded, with one line that names the file
(lesson.json, en.md or zh.md), the beat and the field. Each test breaks one thing in a copy of
lesson 13."""
from __future__ import annotations

import json

import pytest

from engine.scenarios.runner import load_scenario
from lessons import schema
from tests.lessons.conftest import STORY, LessonCopy, beat


def refused(copy: LessonCopy) -> schema.LessonError:
    with pytest.raises(schema.LessonError) as caught:
        schema.load(copy.path)
    error = caught.value
    assert "\n" not in str(error), "a LessonError is one line"
    assert str(error).startswith(copy.path + "/"), "a LessonError starts with the file it is about"
    return error


def assert_names(error: schema.LessonError, file: str, beat_id: str | None, field: str | None) -> None:
    message = str(error)
    assert error.file.endswith(f"/{file}"), message
    assert message.startswith(error.file + ":")
    assert error.beat == beat_id, message
    assert error.field == field, message
    if beat_id is not None:
        assert f"beat {beat_id!r}" in message
    if field is not None:
        assert f": {field}:" in message


# -- lesson.json ---------------------------------------------------------------------------------
def test_invalid_json_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.write_json('{"follows": [}')
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", None, None)
    assert "not valid JSON" in str(error)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_a_number_json_does_not_have_is_refused(lesson_copy: LessonCopy, constant: str) -> None:
    source = json.dumps(lesson_copy.data())
    assert '"expect": 4' in source
    lesson_copy.write_json(source.replace('"expect": 4', f'"expect": {constant}', 1))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", None, None)
    assert f"{constant.lstrip('-')} is not a number a lesson may use" in str(error)


def test_a_json_document_that_is_not_an_object_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.write_json("[1, 2]")
    assert "must be a JSON object" in str(refused(lesson_copy))


def test_an_unknown_key_in_the_lesson_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: d.update(title="HW"))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", None, None)
    assert "unknown keys ['title']" in str(error)


def test_an_unknown_key_in_a_beat_is_refused_naming_the_beat(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election").update(prose="x"))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "election", None)
    assert "unknown keys ['prose']" in str(error)


def test_an_unknown_key_in_a_question_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election")["question"].update(answers=[]))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "election", "question")
    assert "unknown keys ['answers']" in str(error)


def test_a_beat_id_with_capitals_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election").update(id="Election"))
    assert_names(refused(lesson_copy), "lesson.json", "Election", "id")


def test_a_beat_without_an_id_is_named_by_its_position(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election").pop("id"))
    assert_names(refused(lesson_copy), "lesson.json", "#3", "id")


def test_a_beat_id_used_twice_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "new-writes").update(id="c-catches-up"))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "c-catches-up", "id")
    assert "appears twice" in str(error)


def test_a_play_range_that_does_not_start_where_the_last_ended_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "followers-stall").update(play=[4, 8]))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "followers-stall", "play")
    assert "must start at step 3" in str(error)


def test_a_play_range_that_leaves_a_gap_after_a_do_beat_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election").update(play=[11, 11]))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "election", "play")
    assert "must start at step 10" in str(error)


def test_a_play_range_past_the_scenarios_last_step_is_refused(lesson_copy: LessonCopy) -> None:
    last = len(load_scenario(STORY)["steps"]) - 1
    lesson_copy.edit(lambda d: beat(d, "a-returns").update(play=[16, last + 1]))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "a-returns", "play")
    assert f"(steps 0..{last})" in str(error)


@pytest.mark.parametrize("play", [[3], [3, "8"], [3, True], "3-8", [8, 3]])
def test_a_play_range_that_is_not_two_ordered_step_numbers_is_refused(lesson_copy: LessonCopy, play) -> None:
    lesson_copy.edit(lambda d: beat(d, "followers-stall").update(play=play))
    assert_names(refused(lesson_copy), "lesson.json", "followers-stall", "play")


def test_an_unknown_scenario_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: d.update(scenario="no-such-scenario"))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", None, "scenario")
    assert "'no-such-scenario'" in str(error)


def test_an_unknown_scenario_in_a_beat_is_refused_naming_the_beat(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "new-writes").update(scenario="no-such-scenario", play=[0, 1]))
    assert_names(refused(lesson_copy), "lesson.json", "new-writes", "scenario")


def test_a_question_without_expect_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election")["question"].pop("expect"))
    assert_names(refused(lesson_copy), "lesson.json", "election", "question.expect")


def test_a_question_of_an_unknown_kind_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election")["question"].update(kind="text"))
    assert_names(refused(lesson_copy), "lesson.json", "election", "question.kind")


def test_a_malformed_answer_query_is_refused_naming_its_path(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election")["question"]["answer"].update(pick="latest"))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "election", None)
    assert "question.answer.pick must be one of" in str(error)


def test_a_malformed_evidence_query_is_refused_naming_its_index(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "followers-stall")["question"]["evidence"].append({"from": "logs"}))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "followers-stall", None)
    assert "question.evidence[1].from must be one of" in str(error)


def test_a_choice_question_with_one_choice_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "the-end")["question"].update(choices=[{"id": "a-m6", "value": "m6"}]))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "the-end", "question.choices")
    assert "2 to 8 choices" in str(error)


def test_two_choices_with_the_same_value_are_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "the-end")["question"]["choices"][2].update(value="m6"))
    assert_names(refused(lesson_copy), "lesson.json", "the-end", "question.choices")


def test_choices_on_a_question_that_is_not_a_choice_question_are_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election")["question"].update(choices=[{"id": "a", "value": 1},
                                                                               {"id": "b", "value": 2}]))
    assert_names(refused(lesson_copy), "lesson.json", "election", "question.choices")


def test_a_hint_without_its_id_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election")["question"]["hints"].__setitem__(1, {"when": 1}))
    assert_names(refused(lesson_copy), "lesson.json", "election", "question.hints[1]")


def test_a_hint_whose_id_is_not_an_id_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election")["question"]["hints"].__setitem__(0, {"when": 3, "hint": "C!"}))
    assert_names(refused(lesson_copy), "lesson.json", "election", "question.hints[0]")


def test_hints_that_are_not_a_list_are_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election")["question"].update(hints=3))
    assert_names(refused(lesson_copy), "lesson.json", "election", "question.hints")


def test_a_callout_no_beat_shows_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election").pop("callouts"))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", None, "callouts")
    assert "callout 'isr-head' is shown by no beat" in str(error)


def test_a_beat_naming_an_unknown_callout_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election").update(callouts=["isr-head", "isr-queue"]))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "election", "callouts")
    assert "'isr-queue' is not one of the lesson's callouts" in str(error)


def test_a_callout_with_an_unknown_verdict_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: d["callouts"][1].update(verdict="false"))
    assert_names(refused(lesson_copy), "lesson.json", None, "callouts[1].verdict")


def test_a_lesson_that_follows_no_note_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: d.update(follows=[]))
    assert_names(refused(lesson_copy), "lesson.json", None, "follows")


def test_a_coverage_row_not_shaped_like_b21_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: d["rows"].append("Z1"))
    assert_names(refused(lesson_copy), "lesson.json", None, "rows")


def test_a_beat_that_plays_steps_and_asks_the_learner_to_act_is_refused(lesson_copy: LessonCopy) -> None:
    def both(data: dict) -> None:
        kill = beat(data, "kill-a")
        kill["play"] = [9, 9]
        kill["do"] = {"check": kill["do"]["check"], "instead": [{"kill_broker": {"broker": 1}}]}
    lesson_copy.edit(both)
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "kill-a", "do")
    assert "not both" in str(error)


def test_a_do_with_an_invalid_instead_step_argument_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "kill-a").update(
        do={"check": {"from": "brokers"}, "instead": [{"kill_broker": {"broker": "x"}}]}))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "kill-a", "do.instead[0]")
    assert "kill_broker.broker" in str(error)


def test_a_do_with_an_unknown_instead_command_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "kill-a").update(
        do={"check": {"from": "brokers"}, "instead": [{"run": {"ms": 10}}, {"explode_broker": {"broker": 1}}]}))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "kill-a", "do.instead[1]")
    assert "explode_broker" in str(error)


def test_a_do_with_both_instead_and_replaces_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "kill-a")["do"].update(instead=[{"kill_broker": {"broker": 1}}]))
    assert_names(refused(lesson_copy), "lesson.json", "kill-a", "do")


def test_a_do_whose_check_is_malformed_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "kill-a")["do"]["check"].update(then=["negate"]))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "kill-a", None)
    assert "do.check.then[0]" in str(error)


def test_a_do_whose_replaces_does_not_start_where_the_last_beat_ended_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "kill-a")["do"].update(replaces=[8, 9]))
    error = refused(lesson_copy)
    assert_names(error, "lesson.json", "kill-a", "do.replaces")


def test_a_do_whose_replaces_is_null_is_refused_at_that_beat(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "kill-a")["do"].update(replaces=None))
    error = refused(lesson_copy)
    assert error.beat == "kill-a", str(error)


def test_a_last_do_beat_whose_replaces_is_null_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: d["beats"].append({"id": "kill-c", "do": {"check": {"from": "brokers"},
                                                                         "replaces": None}}))
    lesson_copy.append_prose("## beat: kill-c\nNow C.\n\n### do\nKill broker 3.")
    assert_names(refused(lesson_copy), "lesson.json", "kill-c", "do.replaces")


# -- the folder and the prose files ---------------------------------------------------------------
def test_a_folder_not_named_nn_slug_is_refused(lesson_copy: LessonCopy) -> None:
    renamed = lesson_copy.folder.with_name("hw-truncation-story")
    lesson_copy.folder.rename(renamed)
    with pytest.raises(schema.LessonError, match="two digits"):
        schema.load(str(renamed))


@pytest.mark.parametrize("file", ["lesson.json", "en.md", "zh.md"])
def test_a_folder_missing_one_of_its_three_files_is_refused(lesson_copy: LessonCopy, file: str) -> None:
    (lesson_copy.folder / file).unlink()
    error = refused(lesson_copy)
    assert_names(error, file, None, None)
    assert "missing" in str(error)


def test_a_prose_file_that_breaks_the_structure_is_refused_with_its_line(lesson_copy: LessonCopy) -> None:
    source = lesson_copy.prose("zh")
    lines = source.splitlines()
    at = lines.index("## beat: election")
    lines.insert(at + 1, "### remark")
    lesson_copy.write_prose("zh", "\n".join(lines) + "\n")
    error = refused(lesson_copy)
    assert_names(error, "zh.md", None, None)
    assert f"line {at + 2}: unknown sub-section '### remark'" in str(error)


def test_a_prose_file_that_is_not_utf8_is_refused(lesson_copy: LessonCopy) -> None:
    (lesson_copy.folder / "en.md").write_bytes("# Titel\nÜber".encode("latin-1"))
    error = refused(lesson_copy)
    assert_names(error, "en.md", None, None)
    assert "not UTF-8" in str(error)


def test_zh_missing_a_section_en_has_is_refused_naming_zh_and_the_section(lesson_copy: LessonCopy) -> None:
    lesson_copy.drop_section("zh", "### hint: shortest-log")
    error = refused(lesson_copy)
    assert_names(error, "zh.md", "election", None)
    assert "missing or empty section 'election/hint:shortest-log'" in str(error)
    assert "en.md" not in str(error)


def test_an_empty_section_counts_as_missing(lesson_copy: LessonCopy) -> None:
    lesson_copy.write_prose("en", lesson_copy.prose("en").replace(
        "### question\nWhich broker becomes the leader of `t-0`?\n", "### question\n\n", 1))
    error = refused(lesson_copy)
    assert_names(error, "en.md", "election", None)
    assert "'election/question'" in str(error)


def test_a_prose_file_without_a_summary_is_refused(lesson_copy: LessonCopy) -> None:
    lines = lesson_copy.prose("en").splitlines()
    summary_end = lines.index("## beat: three-copies")
    lesson_copy.write_prose("en", "\n".join([lines[0], ""] + lines[summary_end:]) + "\n")
    error = refused(lesson_copy)
    assert_names(error, "en.md", None, None)
    assert "summary" in str(error)


def test_a_section_in_en_that_belongs_to_nothing_in_lesson_json_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.write_prose("en", lesson_copy.prose("en").replace(
        "### question\nWhich broker", "### hint: not-used\nNo answer leads here.\n\n### question\nWhich broker", 1))
    error = refused(lesson_copy)
    assert_names(error, "en.md", None, None)
    assert "section 'election/hint:not-used' belongs to nothing in lesson.json" in str(error)


def test_a_beat_in_the_prose_that_lesson_json_does_not_have_is_refused(lesson_copy: LessonCopy) -> None:
    lesson_copy.append_prose("## beat: epilogue\nThe end.", languages=("zh",))
    error = refused(lesson_copy)
    assert_names(error, "zh.md", None, None)
    assert "'beat:epilogue'" in str(error)


def test_a_do_beat_needs_its_do_section_in_both_languages(lesson_copy: LessonCopy) -> None:
    lesson_copy.drop_section("en", "### do")
    error = refused(lesson_copy)
    assert_names(error, "en.md", "kill-a", None)
    assert "'kill-a/do'" in str(error)


def test_a_callout_needs_both_its_halves_in_the_prose(lesson_copy: LessonCopy) -> None:
    lesson_copy.drop_section("zh", "### engine-shows: isr-head")
    error = refused(lesson_copy)
    assert_names(error, "zh.md", "election", None)
    assert "'election/engine-shows:isr-head'" in str(error)
