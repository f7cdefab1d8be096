"""queries.check refuses a malformed query before anything runs, naming where in the lesson the
broken part sits (nested queries included)."""
from __future__ import annotations

import pytest

from lessons import queries


def refusal(query, where: str = "query") -> str:
    with pytest.raises(queries.QueryError) as caught:
        queries.check(query, where)
    return str(caught.value)


def test_a_well_formed_query_with_every_part_passes() -> None:
    queries.check({"from": "replicas", "where": {"tp": "t-0", "broker": {"in": [1, 2]},
                                                 "log_end_offset": {"not": {"gte": 5}},
                                                 "values": {"contains": "m5"},
                                                 "leader": {"query": {"from": "partitions", "pick": "one",
                                                                      "field": "leader"}}},
                   "pick": "all", "field": "values", "scope": "beat", "internal": False,
                   "then": ["flatten", "unique", "sorted", {"index": 0}]})


def test_a_query_that_is_not_an_object_is_refused() -> None:
    assert refusal(["from", "events"], "question.answer") == "question.answer must be an object"


def test_an_unknown_source_is_refused() -> None:
    message = refusal({"from": "logs"}, "question.answer")
    assert message.startswith("question.answer.from must be one of events, partitions")
    assert "not 'logs'" in message


def test_a_query_without_a_source_is_refused() -> None:
    assert "not None" in refusal({"pick": "one"})


def test_an_unknown_pick_is_refused() -> None:
    assert refusal({"from": "events", "pick": "latest"}).startswith("query.pick must be one of all, first")


def test_an_unknown_key_is_refused() -> None:
    assert "unknown keys ['select']" in refusal({"from": "events", "select": "leader"})


def test_a_where_that_is_not_an_object_is_refused() -> None:
    assert refusal({"from": "events", "where": [["kind", "leader_elected"]]}) == "query.where must be an object"


def test_an_unknown_test_is_refused_naming_its_field() -> None:
    assert refusal({"from": "replicas", "where": {"broker": {"gt": 1}}}).startswith("query.where.broker must be")


def test_in_needs_a_list() -> None:
    assert refusal({"from": "replicas", "where": {"broker": {"in": 1}}}) == "query.where.broker.in must be a list"


def test_a_test_inside_not_is_checked_too() -> None:
    assert refusal({"from": "replicas", "where": {"broker": {"not": {"in": 1}}}}) == \
        "query.where.broker.not.in must be a list"


def test_an_unknown_simple_operation_is_refused_naming_its_index() -> None:
    message = refusal({"from": "events", "then": ["count", "average"]})
    assert message.startswith("query.then[1] must be one of")
    assert "not 'average'" in message


def test_an_unknown_operation_with_an_argument_is_refused() -> None:
    assert refusal({"from": "events", "then": [{"times": 2}]}).startswith("query.then[0] must be one of")


def test_then_must_be_a_list() -> None:
    assert refusal({"from": "events", "then": "count"}) == "query.then must be a list"


def test_index_needs_a_whole_number() -> None:
    for index in (1.5, "1", True):
        assert refusal({"from": "events", "then": [{"index": index}]}) == "query.then[0].index must be a whole number"


def test_div_needs_a_whole_number_above_zero() -> None:
    for divisor in (0, -1000, 1.5, "1000", True, None):
        assert refusal({"from": "events", "then": [{"div": divisor}]}) == \
            "query.then[0].div must be a whole number above 0"


def test_a_field_must_be_a_non_empty_text() -> None:
    assert refusal({"from": "events", "field": ""}) == "query.field must be a non-empty text"


def test_scope_and_internal_take_only_their_values() -> None:
    assert refusal({"from": "events", "scope": "scenario"}) == "query.scope must be 'beat' or 'lesson'"
    assert refusal({"from": "partitions", "internal": "yes"}) == "query.internal must be true or false"


def test_an_error_in_a_query_inside_where_names_its_path() -> None:
    message = refusal({"from": "replicas", "where": {"broker": {"query": {"from": "partitions", "pick": "only"}}}},
                      "question.answer")
    assert message.startswith("question.answer.where.broker.query.pick must be one of")


def test_an_error_in_a_query_inside_not_names_its_path() -> None:
    message = refusal({"from": "replicas", "where": {"broker": {"not": {"query": {"from": "nodes"}}}}})
    assert message.startswith("query.where.broker.not.query.from must be one of")


def test_an_error_in_a_minus_query_names_its_path() -> None:
    message = refusal({"from": "partitions", "pick": "one", "field": "high_watermark",
                       "then": ["first", {"minus": {"from": "partitions", "then": [{"index": "0"}]}}]},
                      "do.check")
    assert message == "do.check.then[1].minus.then[0].index must be a whole number"


def test_a_number_test_that_is_not_finite_is_refused() -> None:
    assert refusal({"from": "replicas", "where": {"log_end_offset": float("nan")}}) == \
        "query.where.log_end_offset must be finite"
