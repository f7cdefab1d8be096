"""A query's value is put in the question's form so it compares with the learner's (a choice
question maps the value to its choice id), a known wrong answer finds its hint, and an answer is
shown in the prose's `{answer}` the same way every time."""
from __future__ import annotations

import pytest

from lessons import answers
from lessons.schema import Choice, Hint, Question

QUERY = {"from": "partitions", "pick": "one", "field": "high_watermark"}
NUMBER = Question("number", QUERY, 4, hints=(Hint(6, "leader-leo"), Hint(3, "message-number")))
CHOICE = Question("choice", QUERY, "b-m6-prime",
                  choices=(Choice("a-m6", "m6"), Choice("b-m6-prime", "m6'"), Choice("c-m7", "m7")),
                  hints=(Hint("a-m6", "own-m6"), Hint("m7", "last-write")))
NUMBERS_CHOICE = Question("choice", QUERY, "pair", choices=(Choice("pair", [1, 2]), Choice("one", 1)))
TEXTS_ANY_ORDER = Question("list", QUERY, ["m5", "m6"], items="text", order="any",
                           hints=(Hint(["m6"], "cut-to-hw"),))
NUMBERS = Question("list", QUERY, [1, 2], items="number")


def test_a_number_from_the_engine_stays_that_number() -> None:
    assert answers.engine(NUMBER, 4) == 4


@pytest.mark.parametrize("value", [True, 4.0, "4", None, [4]])
def test_an_engine_value_that_is_not_a_whole_number_is_a_lesson_bug(value) -> None:
    with pytest.raises(ValueError, match="is not a whole number"):
        answers.engine(NUMBER, value)


def test_a_choice_value_from_the_engine_becomes_its_choice_id() -> None:
    assert answers.engine(CHOICE, "m6'") == "b-m6-prime"
    assert answers.engine(CHOICE, "m7") == "c-m7"


def test_a_choice_value_compares_by_its_json_not_by_python_equality() -> None:
    assert answers.engine(NUMBERS_CHOICE, [1, 2]) == "pair"
    assert answers.engine(NUMBERS_CHOICE, 1) == "one"
    with pytest.raises(ValueError):
        answers.engine(NUMBERS_CHOICE, True)


def test_a_value_no_choice_has_is_a_lesson_bug() -> None:
    with pytest.raises(ValueError, match="none of the choices' values"):
        answers.engine(CHOICE, "m8")


def test_a_list_from_the_engine_is_put_in_the_questions_order() -> None:
    assert answers.engine(TEXTS_ANY_ORDER, ["m6", "m5"]) == answers.given(TEXTS_ANY_ORDER, "m5 m6")
    assert answers.engine(NUMBERS, [2, 1]) == [2, 1]


def test_an_engine_list_of_the_wrong_kind_is_a_lesson_bug() -> None:
    with pytest.raises(ValueError, match="not a list"):
        answers.engine(NUMBERS, 1)
    with pytest.raises(ValueError, match="not a list of whole numbers"):
        answers.engine(NUMBERS, [1, "2"])
    with pytest.raises(ValueError, match="not a list of whole numbers"):
        answers.engine(NUMBERS, [1, True])


def test_the_learner_and_the_engine_agree_when_they_say_the_same() -> None:
    assert answers.same(answers.given(CHOICE, "b-m6-prime"), answers.engine(CHOICE, "m6'"))
    assert answers.same(answers.given(NUMBER, "4"), answers.engine(NUMBER, 4))
    assert not answers.same(answers.given(NUMBER, "3"), answers.engine(NUMBER, 4))


def test_expect_and_hints_may_name_a_choice_by_id_or_by_value() -> None:
    assert answers.expected(CHOICE, "b-m6-prime") == "b-m6-prime"
    assert answers.expected(CHOICE, "m6'") == "b-m6-prime"


def test_an_expect_that_is_not_an_answer_of_the_kind_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="is not a number answer"):
        answers.expected(NUMBER, "four")


def test_a_known_wrong_answer_finds_its_hint() -> None:
    assert answers.hint_for(NUMBER, answers.given(NUMBER, "6")) == "leader-leo"
    assert answers.hint_for(NUMBER, answers.given(NUMBER, 3)) == "message-number"


def test_an_answer_no_hint_names_has_no_hint() -> None:
    assert answers.hint_for(NUMBER, answers.given(NUMBER, "5")) is None
    assert answers.hint_for(NUMBER, answers.given(NUMBER, "4")) is None


def test_a_choice_hint_named_by_value_finds_the_choice() -> None:
    assert answers.hint_for(CHOICE, answers.given(CHOICE, "a-m6")) == "own-m6"
    assert answers.hint_for(CHOICE, answers.given(CHOICE, "c-m7")) == "last-write"


def test_a_list_hint_matches_in_the_questions_order() -> None:
    assert answers.hint_for(TEXTS_ANY_ORDER, answers.given(TEXTS_ANY_ORDER, "m6")) == "cut-to-hw"
    assert answers.hint_for(TEXTS_ANY_ORDER, answers.given(TEXTS_ANY_ORDER, "m6, m5")) is None


def test_a_hint_whose_when_is_not_an_answer_is_skipped() -> None:
    question = Question("number", QUERY, 4, hints=(Hint("four", "words"), Hint(5, "five")))
    assert answers.hint_for(question, 5) == "five"


@pytest.mark.parametrize("value, text", [(4, "4"), (["m5", "m6"], "m5, m6"), ([], "—"), (None, "—"),
                                         (True, "yes"), (False, "no"), ("b-m6-prime", "b-m6-prime"), (0, "0")])
def test_an_answer_is_shown_as_the_prose_prints_it(value, text: str) -> None:
    assert answers.shown(value) == text
