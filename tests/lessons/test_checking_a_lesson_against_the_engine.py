"""`catalog.check` plays a lesson headless from a fresh cluster and lists every disagreement
between what the lesson says and what the engine does; `catalog.check_folder` also turns a folder
that does not load into a problem. The lesson under test is lesson 13, or a copy of it changed in
one place."""
from __future__ import annotations

from pathlib import Path

from engine.scenarios.runner import load_scenario, run_scenario
from lessons import catalog, player, schema
from tests.lessons.conftest import LESSON_13, STORY, LessonCopy, beat


def only_problem(copy: LessonCopy) -> catalog.Problem:
    verdict = catalog.check(schema.load(copy.path))
    assert len(verdict.problems) == 1, [str(p) for p in verdict.problems]
    return verdict.problems[0]


def append_do_beat(copy: LessonCopy, do: dict) -> None:
    copy.edit(lambda d: d["beats"].append({"id": "kill-c", "do": do}))
    copy.append_prose("## beat: kill-c\nNow C.\n\n### do\nKill broker 3.")


def final_replica_values(tmp_path: Path, broker: int, steps: int | None = None) -> list[str]:
    scenario = load_scenario(STORY)
    if steps is not None:
        scenario = dict(scenario, steps=scenario["steps"][:steps])
    _cluster, result = run_scenario(scenario, str(tmp_path / f"run-{steps}"))
    (partition,) = result["partitions"]
    return [r["value"] for r in partition["replica_states"][str(broker)].get("records", [])]


# -- the example lesson -----------------------------------------------------------------------------
def test_lesson_13_agrees_with_the_engine() -> None:
    verdict = catalog.check(schema.load(str(LESSON_13)))
    assert verdict.problems == []
    assert verdict.lesson == "hw-truncation-story"
    assert verdict.questions == 6
    assert verdict.to_dict()["ok"] is True


def test_lesson_13s_answers_are_what_the_scenario_runner_computes(tmp_path: Path) -> None:
    lesson = schema.load(str(LESSON_13))
    found = catalog.check(lesson).run.answers()
    # after steps 0..2, A's log end offset is the number of records it holds
    assert found["three-copies"] == len(final_replica_values(tmp_path, 1, steps=3))
    # at the end, the record at offset 5 on A, as the choice holding that value
    at_5 = final_replica_values(tmp_path, 1)[5]
    (choice,) = [c.id for c in lesson.beat("the-end").question.choices if c.value == at_5]
    assert found["the-end"] == choice
    # C, after catching up (steps 0..13), holds the records it lists
    assert found["c-catches-up"] == final_replica_values(tmp_path, 3, steps=14)


def test_lesson_13s_truncation_answer_is_what_the_truncation_event_removed(tmp_path: Path) -> None:
    events = []
    run_scenario(load_scenario(STORY), str(tmp_path), trace=lambda e: events.append(e.to_dict()))
    removed = sorted(r["value"] for e in events if e["kind"] == "log_truncated" and e["broker"] == 1
                     for r in e["removed"])
    assert catalog.check(schema.load(str(LESSON_13))).run.answers()["a-returns"] == removed


def test_every_question_has_evidence_to_highlight() -> None:
    run = catalog.check(schema.load(str(LESSON_13))).run
    asked = {b.id for b in run.lesson.questions}
    for result in run.results:
        if result.beat in asked:
            assert result.evidence, result.beat


def test_the_do_beats_check_holds_after_the_steps_it_replaces() -> None:
    run = catalog.check(schema.load(str(LESSON_13))).run
    assert [r.check_passed for r in run.results if r.beat == "kill-a"] == [True]


def test_playing_twice_gives_the_same_events(tmp_path: Path) -> None:
    lesson = schema.load(str(LESSON_13))
    first, second = player.play(lesson, str(tmp_path / "a")), player.play(lesson, str(tmp_path / "b"))
    assert (first.digest, first.events) == (second.digest, second.events)
    assert first.answers() == second.answers()


# -- a copy changed in one place ----------------------------------------------------------------------
def test_a_copy_of_lesson_13_has_no_problems(lesson_copy: LessonCopy) -> None:
    assert catalog.check(schema.load(lesson_copy.path)).problems == []


def test_an_expect_the_engine_disagrees_with_names_the_lesson_the_beat_and_both_values(
        lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "followers-stall")["question"].update(expect=6, hints=[]))
    lesson_copy.drop_section("en", "### hint: leader-leo")
    lesson_copy.drop_section("en", "### hint: message-number")
    lesson_copy.drop_section("zh", "### hint: leader-leo")
    lesson_copy.drop_section("zh", "### hint: message-number")
    problem = only_problem(lesson_copy)
    assert (problem.lesson, problem.beat) == ("hw-truncation-story", "followers-stall")
    assert str(problem) == ("hw-truncation-story: beat 'followers-stall': question: the explanation assumes 6 "
                            "but the engine answers 4")


def test_a_list_expect_in_another_order_is_a_disagreement_when_order_matters(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "c-catches-up")["question"].update(expect=["m5", "m1", "m2", "m3", "m4"]))
    problem = only_problem(lesson_copy)
    assert problem.beat == "c-catches-up"
    assert "['m5', 'm1', 'm2', 'm3', 'm4']" in problem.message


def test_a_list_expect_in_another_order_agrees_when_order_is_any(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "a-returns")["question"].update(expect=["m6", "m5"]))
    assert catalog.check(schema.load(lesson_copy.path)).problems == []


def test_a_choice_expect_the_engine_disagrees_with_shows_the_engines_value(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "the-end")["question"].update(expect="c-m7"))
    problem = only_problem(lesson_copy)
    assert problem.beat == "the-end"
    assert problem.message == "question: the explanation assumes 'c-m7' but the engine answers \"m6'\""


def test_an_expect_that_is_not_an_answer_of_the_kind_is_reported(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "three-copies")["question"].update(expect="four"))
    problem = only_problem(lesson_copy)
    assert problem.beat == "three-copies"
    assert problem.message.startswith("question.expect: 'four' is not a number answer")


def test_a_hint_for_the_right_answer_is_reported(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "three-copies")["question"]["hints"][0].update(when=4))
    problem = only_problem(lesson_copy)
    assert str(problem) == "hw-truncation-story: beat 'three-copies': hint 'last-offset' is for the right answer"


def test_a_choice_hint_naming_the_right_choice_by_value_is_reported(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "the-end")["question"]["hints"][0].update(when="m6'"))
    assert only_problem(lesson_copy).message == "hint 'own-m6' is for the right answer"


def test_a_list_hint_for_the_right_answer_in_another_order_is_reported(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "a-returns")["question"]["hints"][0].update(when=["m6", "m5"]))
    assert only_problem(lesson_copy).message == "hint 'cut-to-hw' is for the right answer"


def test_a_do_beat_whose_check_is_false_after_its_steps_is_reported(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "kill-a")["do"]["check"]["where"].update(broker=2))
    problem = only_problem(lesson_copy)
    assert (problem.lesson, problem.beat) == ("hw-truncation-story", "kill-a")
    assert "do.check is not true" in problem.message


def test_a_do_check_that_gives_a_truthy_value_that_is_not_true_is_not_passed(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "kill-a")["do"].update(check={"from": "brokers", "pick": "count"}))
    assert only_problem(lesson_copy).beat == "kill-a"


def test_a_do_check_whose_query_finds_nothing_is_not_passed(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "kill-a")["do"]["check"]["where"].update(broker=9))
    assert only_problem(lesson_copy).beat == "kill-a"


def test_a_do_beats_instead_steps_play_in_place_of_the_learner(lesson_copy: LessonCopy) -> None:
    append_do_beat(lesson_copy, {"check": {"from": "brokers", "where": {"broker": 3}, "pick": "one",
                                           "field": "alive", "then": ["not"]},
                                 "instead": [{"kill_broker": {"broker": 3}}]})
    verdict = catalog.check(schema.load(lesson_copy.path))
    assert verdict.problems == []
    assert verdict.run.results[-1].check_passed is True


def test_an_instead_step_that_fails_stops_the_play_naming_the_beat(lesson_copy: LessonCopy) -> None:
    append_do_beat(lesson_copy, {"check": {"from": "brokers"}, "instead": [{"restart_broker": {"broker": 9}}]})
    verdict = catalog.check(schema.load(lesson_copy.path))
    assert verdict.run is None
    (problem,) = verdict.problems
    assert str(problem).startswith("hw-truncation-story: ")
    assert "beat 'kill-c': the stand-in step restart_broker failed" in str(problem)


def test_a_question_the_engine_cannot_answer_is_reported(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "three-copies")["question"]["answer"]["where"].update(broker=7))
    problem = only_problem(lesson_copy)
    assert problem.beat == "three-copies"
    assert problem.message.startswith("question: the engine gives no answer: no replicas matched")


def test_a_choice_question_whose_value_no_choice_has_is_reported(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "the-end")["question"]["answer"]["then"][0].update(index=0))
    problem = only_problem(lesson_copy)
    assert problem.beat == "the-end"
    assert "'m1' is none of the choices' values" in problem.message


def test_an_answer_without_evidence_is_reported(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "three-copies")["question"].update(
        answer={"from": "replicas", "where": {"broker": 7}, "pick": "count"}, expect=0, hints=[]))
    lesson_copy.drop_section("en", "### hint: last-offset")
    lesson_copy.drop_section("zh", "### hint: last-offset")
    problem = only_problem(lesson_copy)
    assert problem.beat == "three-copies"
    assert problem.message == "question: its answer has no evidence to highlight"


def test_a_question_whose_query_fails_on_the_engines_values_is_reported_not_a_crash(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election")["question"].update(
        answer={"from": "replicas", "field": "log_end_offset", "then": ["sum"]}))
    assert only_problem(lesson_copy).beat == "election"


# -- a folder --------------------------------------------------------------------------------------
def test_check_folder_turns_a_folder_that_does_not_load_into_a_problem(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election").update(id="Election"))
    verdict = catalog.check_folder(lesson_copy.path)
    assert verdict.run is None
    assert verdict.to_dict()["ok"] is False
    (problem,) = verdict.problems
    assert "13-hw-truncation-story/lesson.json: beat 'Election': id: must be lower-case" in str(problem)


def test_check_folder_plays_a_folder_that_loads(lesson_copy: LessonCopy) -> None:
    lesson_copy.edit(lambda d: beat(d, "election")["question"].update(expect=3, hints=[{"when": 1,
                                                                                       "hint": "dead-leader"}]))
    lesson_copy.drop_section("en", "### hint: shortest-log")
    lesson_copy.drop_section("zh", "### hint: shortest-log")
    verdict = catalog.check_folder(lesson_copy.path)
    assert [str(p) for p in verdict.problems] == [
        "hw-truncation-story: beat 'election': question: the explanation assumes 3 but the engine answers 2"]
    assert verdict.to_dict()["answers"]["election"] == 2
