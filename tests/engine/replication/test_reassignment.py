"""The pure decisions behind reassignment and preferred leader election (engine/replication/reassignment.py)."""
from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.common.errors import Errors
from engine.replication import reassignment as ra

TOPICS = {"t": 2, "u": 1}
BROKERS = [1, 2, 3, 4]


def parse(plan, live=(1, 2, 3, 4)):
    return ra.parse_reassignment_plan(plan, TOPICS, BROKERS, live)


def plan_of(*entries, version=1):
    return {"version": version, "partitions": list(entries)}


def test_a_good_plan_parses_from_text_and_from_an_object():
    text = '{"version":1,"partitions":[{"topic":"t","partition":1,"replicas":[4,3,2]}]}'
    assert parse(text) == parse(json.loads(text)) == [ra.PartitionReassignment("t", 1, [4, 3, 2])]


def test_log_dirs_any_is_accepted():
    assert parse(plan_of({"topic": "u", "partition": 0, "replicas": [1, 2], "log_dirs": ["any", "any"]}))


@pytest.mark.parametrize("plan, field, error", [
    ("{not json", "plan", Errors.INVALID_REQUEST),
    ([1, 2], "plan", Errors.INVALID_REQUEST),
    ({"version": 2, "partitions": []}, "version", Errors.INVALID_REQUEST),
    ({"version": 1}, "partitions", Errors.INVALID_REQUEST),
    ({"version": 1, "partitions": []}, "partitions", Errors.INVALID_REQUEST),
    ({"version": 1, "partitions": [], "extra": 1}, "extra", Errors.INVALID_REQUEST),
    (plan_of("t"), "partitions[0]", Errors.INVALID_REQUEST),
    (plan_of({"topic": "t", "partition": 0, "replicas": [1], "replica": 2}), "partitions[0].replica",
     Errors.INVALID_REQUEST),
    (plan_of({"topic": 7, "partition": 0, "replicas": [1]}), "partitions[0].topic", Errors.INVALID_REQUEST),
    (plan_of({"topic": "nope", "partition": 0, "replicas": [1]}), "partitions[0].topic",
     Errors.UNKNOWN_TOPIC_OR_PARTITION),
    (plan_of({"topic": "t", "partition": 2, "replicas": [1]}), "partitions[0].partition",
     Errors.UNKNOWN_TOPIC_OR_PARTITION),
    (plan_of({"topic": "t", "partition": True, "replicas": [1]}), "partitions[0].partition", Errors.INVALID_REQUEST),
    (plan_of({"topic": "t", "partition": -1, "replicas": [1]}), "partitions[0].partition", Errors.INVALID_REQUEST),
    (plan_of({"topic": "t", "partition": 0, "replicas": []}), "partitions[0].replicas",
     Errors.INVALID_REPLICA_ASSIGNMENT),
    (plan_of({"topic": "t", "partition": 0}), "partitions[0].replicas", Errors.INVALID_REPLICA_ASSIGNMENT),
    (plan_of({"topic": "t", "partition": 0, "replicas": [1, "2"]}), "partitions[0].replicas",
     Errors.INVALID_REPLICA_ASSIGNMENT),
    (plan_of({"topic": "t", "partition": 0, "replicas": [1, 2, 1]}), "partitions[0].replicas",
     Errors.INVALID_REPLICA_ASSIGNMENT),
    (plan_of({"topic": "t", "partition": 0, "replicas": [1, 9]}), "partitions[0].replicas",
     Errors.INVALID_REPLICA_ASSIGNMENT),
    (plan_of({"topic": "t", "partition": 0, "replicas": [1, 2]}, {"topic": "t", "partition": 0, "replicas": [3]}),
     "partitions[1]", Errors.INVALID_REQUEST),
    (plan_of({"topic": "t", "partition": 0, "replicas": [1, 2], "log_dirs": ["/data"]}), "partitions[0].log_dirs",
     Errors.INVALID_REQUEST),
])
def test_a_bad_plan_is_refused_naming_the_field(plan, field, error):
    with pytest.raises(ra.ReassignmentPlanError) as caught:
        parse(plan)
    assert caught.value.field == field and caught.value.error == error
    assert field.split(".")[-1] in str(caught.value) or field == "plan"


def test_a_broker_that_is_down_may_not_receive_replicas():
    with pytest.raises(ra.ReassignmentPlanError, match="not alive") as caught:
        parse(plan_of({"topic": "t", "partition": 0, "replicas": [1, 4]}), live=(1, 2, 3))
    assert caught.value.field == "partitions[0].replicas"


def test_replica_sets_list_the_target_first_as_kip_455_does():
    sets = ra.reassignment_state([1, 2, 3], [4, 5, 6])
    assert sets.replicas == [4, 5, 6, 1, 2, 3] and sets.adding == [4, 5, 6] and sets.removing == [1, 2, 3]
    assert sets.target == [4, 5, 6]
    overlap = ra.reassignment_state([1, 2, 3], [3, 4, 2])
    assert overlap.replicas == [3, 4, 2, 1] and overlap.adding == [4] and overlap.removing == [1]


@given(st.lists(st.integers(1, 9), min_size=1, max_size=5, unique=True),
       st.lists(st.integers(1, 9), min_size=1, max_size=5, unique=True))
def test_replica_sets_hold_both_sides_and_end_at_the_target(original, target):
    sets = ra.reassignment_state(original, target)
    assert set(sets.replicas) == set(original) | set(target) and len(sets.replicas) == len(set(sets.replicas))
    assert sets.target == target
    assert set(sets.adding) == set(target) - set(original) and set(sets.removing) == set(original) - set(target)


def test_complete_once_the_target_is_inside_the_isr():
    assert not ra.is_reassignment_complete([4, 5], [1, 2, 4])
    assert ra.is_reassignment_complete([4, 5], [5, 1, 4])


def test_preferred_leader_is_the_first_replica_only_when_alive_and_in_sync():
    assert ra.preferred_replica_leader([2, 1, 3], [1, 2, 3], {1, 2, 3}) == 2
    assert ra.preferred_replica_leader([2, 1, 3], [1, 3], {1, 2, 3}) is None      # out of the ISR
    assert ra.preferred_replica_leader([2, 1, 3], [1, 2, 3], {1, 3}) is None      # down
    assert ra.preferred_election_error([2, 1, 3], 2, [1, 2, 3], {1, 2, 3}) == Errors.ELECTION_NOT_NEEDED
    assert ra.preferred_election_error([2, 1, 3], 1, [1, 3], {1, 2, 3}) == Errors.PREFERRED_LEADER_NOT_AVAILABLE
    assert ra.preferred_election_error([2, 1, 3], 1, [1, 2, 3], {1, 2, 3}) == Errors.NONE


def test_reassignment_leader_is_the_first_target_replica_alive_and_in_sync():
    assert ra.reassignment_leader([4, 5, 6], [1, 5, 4], {1, 5}) == 5
    assert ra.reassignment_leader([4, 5], [1], {1, 4, 5}) is None


def leadership(topic, partition, replicas, leader, isr=None):
    return ra.PartitionLeadership(topic, partition, replicas, leader, isr if isr is not None else replicas)


def test_imbalance_counts_per_preferred_broker():
    partitions = [leadership("t", 0, [1, 2], 2), leadership("t", 1, [1, 2], 1), leadership("t", 2, [2, 1], 2)]
    assert ra.leader_imbalance(partitions) == {1: ([("t", 0)], 2), 2: ([], 1)}


def test_auto_rebalance_moves_only_brokers_above_the_ratio_and_only_where_the_preferred_can_lead():
    # broker 1 prefers 10 partitions and leads 9 of them: 10% is not above 10%.
    partitions = [leadership("t", p, [1, 2], 1) for p in range(9)] + [leadership("t", 9, [1, 2], 2)]
    assert ra.auto_rebalance_candidates(partitions, {1, 2}, 10) == []
    assert ra.auto_rebalance_candidates(partitions, {1, 2}, 9) == [("t", 9)]
    # out of the ISR or down: not a candidate
    stuck = [leadership("u", 0, [1, 2], 2, isr=[2]), leadership("u", 1, [1, 2], 2)]
    assert ra.auto_rebalance_candidates(stuck, {1, 2}, 10) == [("u", 1)]
    assert ra.auto_rebalance_candidates(stuck, {2}, 10) == []


def test_verify_reports_completed_in_progress_and_different():
    plan = [ra.PartitionReassignment("t", 0, [2, 3]), ra.PartitionReassignment("t", 1, [2, 3]),
            ra.PartitionReassignment("u", 0, [2, 3])]
    lines = ra.verify_reassignment(plan, {("t", 0): [2, 3], ("t", 1): [2, 3, 1], ("u", 0): [1, 2]}, {("t", 1)})
    assert [s for _, _, s, _ in lines] == ["completed", "in progress", "different"]
    assert lines[0][3] == "Reassignment of partition t-0 is completed."
    assert lines[2][3].endswith("replica set is 1,2 rather than 2,3.")
