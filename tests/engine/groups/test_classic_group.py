"""The classic group state machine on its own: transitions, leader, protocol vote, commit validation."""
from __future__ import annotations

import pytest

from engine.groups import group as g


def member(member_id, protocols=("range",), **kw):
    return g.GroupMember(member_id, member_id.split("-")[0], "/x", 300000, 45000, "consumer",
                         [(p, b"") for p in protocols], **kw)


def test_only_kafka_s_transitions_are_allowed():
    group = g.ClassicGroup("gr")
    with pytest.raises(g.IllegalStateTransition):
        group.transition_to(g.STABLE, 0)
    group.transition_to(g.PREPARING_REBALANCE, 1)
    group.transition_to(g.COMPLETING_REBALANCE, 2)
    with pytest.raises(g.IllegalStateTransition):
        group.transition_to(g.EMPTY, 3)
    group.transition_to(g.STABLE, 3)
    assert group.can_rebalance() and group.previous_state == g.COMPLETING_REBALANCE and group.state_timestamp == 3
    group.transition_to(g.DEAD, 4)
    with pytest.raises(g.IllegalStateTransition):
        group.transition_to(g.PREPARING_REBALANCE, 5)


def test_the_first_member_leads_and_a_successor_is_taken_in_hashmap_order():
    group = g.ClassicGroup("gr")
    for m in ("a-1", "b-2", "c-3"):
        group.add(member(m))
    assert group.leader_id == "a-1"
    group.remove("a-1")
    assert group.leader_id == group.members_in_order()[0].member_id
    group.remove("b-2")
    group.remove("c-3")
    assert group.leader_id is None and not group.members


def test_the_protocol_is_the_most_voted_one_every_member_supports():
    group = g.ClassicGroup("gr")
    group.add(member("a-1", ("range", "cooperative-sticky")))
    group.transition_to(g.PREPARING_REBALANCE, 0)
    group.add(member("b-2", ("cooperative-sticky", "range")))
    group.add(member("c-3", ("cooperative-sticky",)))
    assert group.select_protocol() == "cooperative-sticky"   # range is not supported by c-3
    assert group.supports_protocols("consumer", ["cooperative-sticky"])
    assert not group.supports_protocols("consumer", ["roundrobin"])
    assert not group.supports_protocols("connect", ["cooperative-sticky"])


def test_the_default_strategy_list_votes_range():
    group = g.ClassicGroup("gr")
    for m in ("a-1", "b-2"):
        group.add(member(m, ("range", "cooperative-sticky")))
    assert group.select_protocol() == "range"


def test_an_empty_group_has_no_protocol_to_select():
    # Kafka's ClassicGroup.selectProtocol throws IllegalStateException for a group with no members.
    with pytest.raises(g.IllegalStateTransition):
        g.ClassicGroup("gr").select_protocol()


def test_the_join_phase_is_over_when_everyone_waits_and_no_id_is_pending():
    group = g.ClassicGroup("gr")
    a, b = member("a-1"), member("b-2")
    group.add(a)
    group.add(b)
    assert not group.has_all_members_joined()
    a.awaiting_join = b.awaiting_join = print
    assert group.has_all_members_joined()
    group.add_pending_member("c-3")
    assert not group.has_all_members_joined()
    group.remove("c-3")
    assert group.has_all_members_joined()
    b.awaiting_join = None
    assert [m.member_id for m in group.not_yet_rejoined()] == ["b-2"]


def test_a_leader_that_did_not_rejoin_is_replaced_by_one_that_did():
    group = g.ClassicGroup("gr")
    a, b = member("a-1"), member("b-2")
    group.add(a)
    group.add(b)
    b.awaiting_join = print
    assert group.maybe_elect_new_joined_leader() and group.leader_id == "b-2"
    b.awaiting_join = None
    assert not group.maybe_elect_new_joined_leader()


def test_init_next_generation_picks_the_protocol_or_empties_the_group():
    group = g.ClassicGroup("gr")
    group.add(member("a-1"))
    group.transition_to(g.PREPARING_REBALANCE, 0)
    group.init_next_generation(1)
    assert (group.state, group.generation, group.protocol_name) == (g.COMPLETING_REBALANCE, 1, "range")
    group.transition_to(g.PREPARING_REBALANCE, 2)
    group.remove("a-1")
    group.init_next_generation(3)
    assert (group.state, group.generation, group.protocol_name) == (g.EMPTY, 2, None)


def test_heartbeat_expiry_spares_members_parked_in_join_or_sync():
    m = member("a-1")
    assert not m.has_satisfied_heartbeat()
    m.awaiting_sync = print
    assert m.has_satisfied_heartbeat()
    m.is_new = True
    assert not m.has_satisfied_heartbeat()      # a new member can expire while waiting to join


@pytest.mark.parametrize("state, member_id, generation, error", [
    (g.EMPTY, "", -1, None),                              # assign() consumers commit into an empty group
    (g.STABLE, "", -1, "UNKNOWN_MEMBER_ID"),
    (g.STABLE, "a-1", 3, None),
    (g.STABLE, "a-1", 2, "ILLEGAL_GENERATION"),
    (g.STABLE, "zz", 3, "UNKNOWN_MEMBER_ID"),
    (g.PREPARING_REBALANCE, "a-1", 3, None),              # still allowed while members rejoin
    (g.COMPLETING_REBALANCE, "a-1", 3, "REBALANCE_IN_PROGRESS"),
    (g.DEAD, "a-1", 3, "COORDINATOR_NOT_AVAILABLE"),
])
def test_offset_commit_validation(state, member_id, generation, error):
    group = g.ClassicGroup("gr", generation=3)
    if state != g.EMPTY:
        group.add(member("a-1"))
    group.state = state
    assert group.validate_offset_commit(member_id, generation) == error
