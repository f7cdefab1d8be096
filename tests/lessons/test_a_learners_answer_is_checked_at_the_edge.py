"""What the browser sends as an answer is turned into the question's kind, or refused with a
one-line message and a code the page translates: a wrong type is never "wrong", it is not an
answer yet."""
from __future__ import annotations

import math

import pytest

from lessons import answers
from lessons.schema import Choice, Question

QUERY = {"from": "partitions", "pick": "one", "field": "high_watermark"}
NUMBER = Question("number", QUERY, 4)
BROKER = Question("broker", QUERY, 2)
CHOICE = Question("choice", QUERY, "b-m6-prime",
                  choices=(Choice("a-m6", "m6"), Choice("b-m6-prime", "m6'"), Choice("c-m7", "m7")))
TEXTS = Question("list", QUERY, ["m1", "m2"], items="text")
TEXTS_ANY_ORDER = Question("list", QUERY, ["m5", "m6"], items="text", order="any")
NUMBERS = Question("list", QUERY, [1, 2], items="number")
NUMBERS_ANY_ORDER = Question("list", QUERY, [1, 2], items="number", order="any")


def refusal(question: Question, raw) -> answers.AnswerError:
    with pytest.raises(answers.AnswerError) as caught:
        answers.given(question, raw)
    assert "\n" not in str(caught.value)
    return caught.value


@pytest.mark.parametrize("raw", ["4", " 4 ", 4, 4.0])
def test_a_number_is_read_from_text_an_int_or_a_whole_float(raw) -> None:
    assert answers.given(NUMBER, raw) == 4
    assert type(answers.given(NUMBER, raw)) is int


@pytest.mark.parametrize("raw", ["4.5", 4.5, "abc", "", "4 5", "0x10", "+4", "1e3", None, [4], {"n": 4}])
def test_what_is_not_a_whole_number_is_refused(raw) -> None:
    assert refusal(NUMBER, raw).code == "number"


@pytest.mark.parametrize("raw", [True, False])
def test_true_and_false_are_not_numbers(raw) -> None:
    error = refusal(NUMBER, raw)
    assert error.code == "number"
    assert "true/false" in str(error)


@pytest.mark.parametrize("raw", [math.nan, math.inf, -math.inf])
def test_nan_and_infinity_are_refused(raw) -> None:
    assert refusal(NUMBER, raw).code == "number"


@pytest.mark.parametrize("raw", [-2, "-2", 2**70, float(2**70), str(2**63), answers.MAX_NUMBER + 1])
def test_numbers_out_of_range_are_refused(raw) -> None:
    assert refusal(NUMBER, raw).code == "number"


def test_the_range_is_minus_one_to_the_largest_kafka_offset() -> None:
    assert answers.given(NUMBER, -1) == -1
    assert answers.given(NUMBER, str(answers.MAX_NUMBER)) == answers.MAX_NUMBER == 2**63 - 1


def test_a_broker_is_a_whole_number_like_a_number() -> None:
    assert answers.given(BROKER, "2") == 2
    error = refusal(BROKER, "B")
    assert "a broker id" in str(error)
    assert refusal(BROKER, True).code == "number"


def test_a_choice_is_one_of_the_choice_ids() -> None:
    assert answers.given(CHOICE, "b-m6-prime") == "b-m6-prime"


@pytest.mark.parametrize("raw", ["d-m8", "m6'", "", None, 1, ["a-m6"]])
def test_a_choice_that_is_not_one_of_the_ids_is_refused(raw) -> None:
    error = refusal(CHOICE, raw)
    assert error.code == "choice"
    assert "a-m6, b-m6-prime, c-m7" in str(error)


@pytest.mark.parametrize("raw", ["m1, m2", "m1 m2", "m1,m2", " m1 ,  m2 ", "m1，m2", "m1、m2", "m1\nm2",
                                 ["m1", "m2"], [" m1", "m2 ", ""]])
def test_a_text_list_is_split_on_commas_spaces_and_chinese_commas(raw) -> None:
    assert answers.given(TEXTS, raw) == ["m1", "m2"]


def test_a_text_list_keeps_its_order_when_order_matters() -> None:
    assert answers.given(TEXTS, "m2, m1") == ["m2", "m1"]
    assert not answers.same(answers.given(TEXTS, "m2, m1"), answers.expected(TEXTS, ["m1", "m2"]))


def test_a_list_with_order_any_compares_as_a_multiset() -> None:
    expect = answers.expected(TEXTS_ANY_ORDER, ["m5", "m6"])
    assert answers.same(answers.given(TEXTS_ANY_ORDER, "m6、m5"), expect)
    assert answers.same(answers.given(TEXTS_ANY_ORDER, ["m5", "m6"]), expect)
    assert not answers.same(answers.given(TEXTS_ANY_ORDER, "m5, m6, m6"), expect)
    assert not answers.same(answers.given(TEXTS_ANY_ORDER, "m6"), expect)


def test_a_number_list_reads_each_item_as_a_whole_number() -> None:
    assert answers.given(NUMBERS, "1，2") == [1, 2]
    assert answers.given(NUMBERS, [1, "2", 2.0]) == [1, 2, 2]
    assert answers.same(answers.given(NUMBERS_ANY_ORDER, "2 1"), answers.expected(NUMBERS_ANY_ORDER, [1, 2]))
    assert answers.same(answers.given(NUMBERS_ANY_ORDER, "10 9"), answers.expected(NUMBERS_ANY_ORDER, [9, 10]))


@pytest.mark.parametrize("raw", ["1, x", [1, True], [1, math.nan], [1, 2.5], "1, -2"])
def test_a_number_list_with_one_bad_item_is_refused(raw) -> None:
    assert refusal(NUMBERS, raw).code == "number"


def test_an_empty_answer_is_an_empty_list() -> None:
    assert answers.given(TEXTS, " ,， ") == []


@pytest.mark.parametrize("raw", [None, 5, {"m1": True}])
def test_a_list_answer_that_is_neither_text_nor_a_list_is_refused(raw) -> None:
    assert refusal(TEXTS, raw).code == "list"


@pytest.mark.parametrize("raw", [[True], [1.5], [["m1"]], [None]])
def test_a_text_list_holding_something_that_is_not_a_name_is_refused(raw) -> None:
    assert refusal(TEXTS, raw).code == "list"


def test_a_list_of_more_than_a_hundred_items_is_refused() -> None:
    assert len(answers.given(TEXTS, ["m"] * answers.MAX_ITEMS)) == answers.MAX_ITEMS
    assert refusal(TEXTS, ["m"] * (answers.MAX_ITEMS + 1)).code == "too_many"
    assert refusal(NUMBERS, " ".join(["1"] * (answers.MAX_ITEMS + 1))).code == "too_many"


def test_an_over_long_item_is_refused() -> None:
    assert answers.given(TEXTS, ["m" * answers.MAX_TEXT]) == ["m" * answers.MAX_TEXT]
    assert refusal(TEXTS, ["m" * (answers.MAX_TEXT + 1)]).code == "too_long"
