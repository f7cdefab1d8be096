"""What a query does with the items of its source: `where` tests, `pick`, a dotted `field` and the
`then` operations — on a real cluster (lesson 13's scenario), compared with what the cluster's own
state and events say."""
from __future__ import annotations

import pytest

from lessons import queries
from tests.lessons.conftest import Played


def values_on(played: Played, broker: int) -> list[str]:
    return [r["value"] for r in played.replica_state(broker)["records"]]


def fails(played: Played, query: dict) -> str:
    queries.check(query)
    with pytest.raises(queries.QueryError) as caught:
        queries.evaluate(query, played.world())
    return str(caught.value)


# -- pick -------------------------------------------------------------------------------------------
def test_pick_all_is_the_default_and_keeps_the_sources_order(story: Played) -> None:
    seqs = [e["seq"] for e in story.events if e["kind"] == "leader_elected"]
    assert story.answer({"from": "events", "where": {"kind": "leader_elected"}, "field": "seq"}) == seqs
    assert seqs == sorted(seqs) and len(seqs) >= 2


def test_pick_first_and_last_take_the_ends(story: Played) -> None:
    elected = [e for e in story.events if e["kind"] == "leader_elected"]
    query = {"from": "events", "where": {"kind": "leader_elected"}, "field": "leader"}
    assert story.answer(dict(query, pick="first")) == elected[0]["leader"]
    assert story.answer(dict(query, pick="last")) == elected[-1]["leader"]
    assert elected[0]["leader"] != elected[-1]["leader"]


def test_pick_count_counts_the_matches(story: Played) -> None:
    assert story.answer({"from": "replicas", "pick": "count"}) == len(story.partition()["replicas"])
    assert story.answer({"from": "replicas", "pick": "count", "field": "broker"}) == len(story.partition()["replicas"])


def test_pick_one_with_two_matches_is_an_error(story: Played) -> None:
    message = fails(story, {"from": "events", "where": {"kind": "leader_elected"}, "pick": "one"})
    assert "expected one" in message


def test_pick_first_with_no_match_is_an_error(story: Played) -> None:
    message = fails(story, {"from": "replicas", "where": {"broker": 9}, "pick": "first"})
    assert message.startswith("no replicas matched")


def test_pick_all_with_no_match_is_an_empty_list(story: Played) -> None:
    assert queries.evaluate({"from": "replicas", "where": {"broker": 9}}, story.world()) == queries.Answer([], [])


# -- field paths ------------------------------------------------------------------------------------
def test_a_field_path_reads_through_a_list(story: Played) -> None:
    (truncated,) = [e for e in story.events if e["kind"] == "log_truncated"]
    assert story.answer({"from": "events", "where": {"kind": "log_truncated"}, "pick": "one",
                         "field": "removed.value"}) == [r["value"] for r in truncated["removed"]]


def test_a_field_path_over_all_items_gives_one_list_per_item(story: Played) -> None:
    assert story.answer({"from": "replicas", "field": "records.offset"}) == \
        [[r["offset"] for r in story.replica_state(b)["records"]] for b in story.partition()["replicas"]]


def test_a_field_an_item_does_not_have_reads_as_none(story: Played) -> None:
    assert story.answer({"from": "brokers", "pick": "first", "field": "rack"}) is None
    assert story.answer({"from": "brokers", "pick": "first", "field": "broker.id"}) is None


# -- where ------------------------------------------------------------------------------------------
def test_every_where_field_must_match(story: Played) -> None:
    expected = [e["seq"] for e in story.events if e["kind"] == "records_appended" and e.get("broker") == 2]
    assert story.answer({"from": "events", "where": {"kind": "records_appended", "broker": 2}, "field": "seq"}) == \
        expected


def test_in_matches_any_of_a_list(story: Played) -> None:
    assert story.answer({"from": "replicas", "where": {"broker": {"in": [1, 3, 7]}}, "field": "broker"}) == [1, 3]


def test_not_inverts_a_value_or_a_test(story: Played) -> None:
    assert story.answer({"from": "replicas", "where": {"broker": {"not": 2}}, "field": "broker"}) == [1, 3]
    assert story.answer({"from": "replicas", "where": {"broker": {"not": {"in": [1, 2]}}}, "field": "broker"}) == [3]


def test_gte_and_lte_compare_numbers(story_after_election: Played) -> None:
    leo = {b: story_after_election.replica_state(b).get("log_end_offset") for b in (1, 2, 3)}
    assert story_after_election.answer({"from": "replicas", "where": {"log_end_offset": {"gte": 5}},
                                        "field": "broker"}) == [b for b, o in leo.items() if o is not None and o >= 5]
    assert story_after_election.answer({"from": "replicas", "where": {"log_end_offset": {"lte": 4}},
                                        "field": "broker"}) == [b for b, o in leo.items() if o is not None and o <= 4]


def test_gte_never_matches_an_item_without_the_number(story_after_election: Played) -> None:
    dead = story_after_election.answer({"from": "replicas", "where": {"alive": False}, "pick": "one",
                                        "field": "broker"})
    alive = story_after_election.answer({"from": "replicas", "where": {"log_end_offset": {"gte": 0}},
                                         "field": "broker"})
    assert dead not in alive and len(alive) == 2


def test_contains_matches_a_list_holding_the_value(story: Played) -> None:
    state = story.partition()
    assert story.answer({"from": "partitions", "where": {"isr": {"contains": 3}}, "pick": "count"}) == \
        int(3 in state["isr"])
    holding = [b for b in state["replicas"] if "m6'" in values_on(story, b)]
    assert story.answer({"from": "replicas", "where": {"values": {"contains": "m6'"}}, "field": "broker"}) == holding
    assert story.answer({"from": "replicas", "where": {"values": {"contains": "m6"}}, "pick": "count"}) == 0


def test_a_nested_query_gives_the_value_to_match(story_after_election: Played) -> None:
    leader = story_after_election.partition()["leader"]
    found = queries.evaluate({"from": "replicas", "where": {"broker": {"query": {
        "from": "partitions", "where": {"tp": "t-0"}, "pick": "one", "field": "leader"}}}, "pick": "one"},
        story_after_election.world())
    assert found.value["broker"] == leader
    assert found.value["values"] == values_on(story_after_election, leader)
    assert found.evidence == [{"kind": "replica", "tp": "t-0", "broker": leader}]


def test_a_nested_query_inside_not(story_after_election: Played) -> None:
    state = story_after_election.partition()
    assert story_after_election.answer({"from": "replicas", "where": {"broker": {"not": {"query": {
        "from": "partitions", "pick": "one", "field": "leader"}}}}, "field": "broker"}) == \
        [b for b in state["replicas"] if b != state["leader"]]


# -- then -------------------------------------------------------------------------------------------
def test_flatten_joins_the_lists_of_every_item(story: Played) -> None:
    removed = [r["value"] for e in story.events if e["kind"] == "log_truncated" for r in e["removed"]]
    assert story.answer({"from": "events", "where": {"kind": "log_truncated"}, "field": "removed.value",
                         "then": ["flatten"]}) == removed
    assert removed


def test_flatten_count_counts_every_record_on_every_replica(story: Played) -> None:
    assert story.answer({"from": "replicas", "field": "values", "then": ["flatten", "count"]}) == \
        sum(len(values_on(story, b)) for b in (1, 2, 3))


def test_unique_keeps_the_first_of_each_in_order_and_sorted_sorts(story: Played) -> None:
    kinds = [e["kind"] for e in story.events]
    first_seen = list(dict.fromkeys(kinds))
    assert first_seen != sorted(first_seen)
    assert story.answer({"from": "events", "field": "kind", "then": ["unique"]}) == first_seen
    assert story.answer({"from": "events", "field": "kind", "then": ["unique", "sorted"]}) == sorted(set(kinds))


def test_count_of_a_single_value_is_one_and_of_none_zero(story: Played) -> None:
    assert story.answer({"from": "brokers", "pick": "first", "field": "broker", "then": ["count"]}) == 1
    assert story.answer({"from": "brokers", "pick": "first", "field": "rack", "then": ["count"]}) == 0


def test_sum_min_and_max_of_numbers(story_after_election: Played) -> None:
    leos = [story_after_election.replica_state(b)["log_end_offset"] for b in (2, 3)]
    query = {"from": "replicas", "where": {"alive": True}, "field": "log_end_offset"}
    assert story_after_election.answer(dict(query, then=["sum"])) == sum(leos)
    assert story_after_election.answer(dict(query, then=["min"])) == min(leos)
    assert story_after_election.answer(dict(query, then=["max"])) == max(leos)
    assert min(leos) != max(leos)


def test_sum_of_nothing_is_an_error(story: Played) -> None:
    assert fails(story, {"from": "replicas", "where": {"broker": 9}, "field": "log_end_offset", "then": ["sum"]})


@pytest.mark.parametrize("op", ["sum", "min", "max", "sorted"])
def test_an_operation_on_a_list_with_a_missing_number_is_a_query_error(story_after_election: Played, op: str) -> None:
    fails(story_after_election, {"from": "replicas", "field": "log_end_offset", "then": [op]})


def test_unique_of_lists_keeps_the_first_of_each(story: Played) -> None:
    assert story.answer({"from": "replicas", "field": "values", "then": ["unique"]}) == [values_on(story, 1)]


def test_flatten_of_a_number_is_a_query_error(story: Played) -> None:
    fails(story, {"from": "brokers", "pick": "count", "then": ["flatten"]})


def test_contains_and_equals_give_true_or_false(story: Played) -> None:
    on_a = values_on(story, 1)
    query = {"from": "replicas", "where": {"broker": 1}, "pick": "one", "field": "values"}
    assert story.answer(dict(query, then=[{"contains": "m6'"}])) is ("m6'" in on_a) is True
    assert story.answer(dict(query, then=[{"contains": "m6"}])) is ("m6" in on_a) is False
    assert story.answer(dict(query, then=[{"equals": on_a}])) is True
    assert story.answer(dict(query, then=[{"equals": on_a[:-1]}])) is False


def test_not_negates(story: Played) -> None:
    query = {"from": "brokers", "where": {"broker": 1}, "pick": "one", "field": "alive"}
    assert story.answer(dict(query, then=["not"])) is (not story.cluster.brokers[1].alive)


def test_minus_subtracts_a_second_querys_number_and_adds_its_evidence(story_after_election: Played) -> None:
    leader = story_after_election.partition()["leader"]
    follower = 3
    found = queries.evaluate({"from": "replicas", "where": {"broker": leader}, "pick": "one",
                              "field": "log_end_offset", "then": [{"minus": {
                                  "from": "replicas", "where": {"broker": follower}, "pick": "one",
                                  "field": "log_end_offset"}}]}, story_after_election.world())
    assert found.value == (story_after_election.replica_state(leader)["log_end_offset"]
                           - story_after_election.replica_state(follower)["log_end_offset"])
    assert found.evidence == [{"kind": "replica", "tp": "t-0", "broker": leader},
                              {"kind": "replica", "tp": "t-0", "broker": follower}]


def test_plus_adds_a_second_querys_number(story: Played) -> None:
    assert story.answer({"from": "partitions", "pick": "one", "field": "high_watermark",
                         "then": [{"plus": {"from": "brokers", "pick": "count"}}]}) == \
        story.partition()["high_watermark"] + len(story.cluster.brokers)


def test_minus_of_something_that_is_not_a_number_is_an_error(story: Played) -> None:
    message = fails(story, {"from": "replicas", "where": {"broker": 1}, "pick": "one", "field": "values",
                            "then": [{"minus": {"from": "brokers", "pick": "count"}}]})
    assert "needs two whole numbers" in message


def test_div_divides_by_a_whole_number_rounding_down(story: Played) -> None:
    times = [e["time_ms"] for e in story.events]
    span = times[-1] - times[0]
    query = {"from": "events", "pick": "last", "field": "time_ms",
             "then": [{"minus": {"from": "events", "pick": "first", "field": "time_ms"}}]}
    assert span % 1000 != 0                                     # so rounding down is seen
    assert story.answer(dict(query, then=query["then"] + [{"div": 1000}])) == span // 1000
    assert story.answer(dict(query, then=query["then"] + [{"div": 1}])) == span


def test_div_of_something_that_is_not_a_whole_number_is_an_error(story: Played) -> None:
    message = fails(story, {"from": "brokers", "where": {"broker": 1}, "pick": "one", "field": "alive",
                            "then": [{"div": 2}]})
    assert message == "div needs a whole number, not True"
    assert fails(story, {"from": "brokers", "field": "broker", "then": [{"div": 2}]}).startswith("div needs a whole")


def test_index_reads_one_item_counting_from_either_end(story: Played) -> None:
    on_a = values_on(story, 1)
    query = {"from": "replicas", "where": {"broker": 1}, "pick": "one", "field": "values"}
    assert story.answer(dict(query, then=[{"index": 5}])) == on_a[5]
    assert story.answer(dict(query, then=[{"index": -1}])) == on_a[-1]
    assert fails(story, dict(query, then=[{"index": len(on_a)}])).startswith(f"no item {len(on_a)}")


def test_first_and_last_operations_take_the_ends_of_a_list(story: Played) -> None:
    on_c = values_on(story, 3)
    query = {"from": "replicas", "where": {"broker": 3}, "pick": "one", "field": "values"}
    assert story.answer(dict(query, then=["first"])) == on_c[0]
    assert story.answer(dict(query, then=["last"])) == on_c[-1]
    assert fails(story, {"from": "replicas", "where": {"broker": 9}, "then": ["first"]}).startswith("no first item")


def test_operations_run_in_order(story: Played) -> None:
    all_values = [v for b in (1, 2, 3) for v in values_on(story, b)]
    assert story.answer({"from": "replicas", "field": "values", "then": ["flatten", "unique", "sorted", "count"]}) == \
        len(set(all_values))
    assert story.answer({"from": "replicas", "field": "values", "then": ["flatten", "count"]}) == len(all_values)
