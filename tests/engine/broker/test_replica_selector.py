"""The replica selector of follower fetching (KIP-392): Kafka's ReplicaSelectorTest, translated, and the
`replica.selector.class` setting."""
from __future__ import annotations

import pytest

from engine.broker.replica_selector import (
    RACK_AWARE,
    ReplicaView,
    preferred_read_replica,
    rack_aware_select,
    selector_class,
)
from engine.storage.errors import InvalidConfigError

# ReplicaSelectorTest.replicaInfoSet: (broker, rack, log end offset, ms since last caught up); 0 leads.
LEADER = ReplicaView(0, "rack-a", 4, 0)
REPLICAS = [LEADER, ReplicaView(1, "rack-a", 2, 5), ReplicaView(2, "rack-b", 3, 3), ReplicaView(3, "rack-b", 4, 2)]


def test_it_picks_the_most_caught_up_replica_of_the_client_s_rack():
    chosen = rack_aware_select("rack-b", REPLICAS, LEADER)

    assert chosen.rack == "rack-b" and chosen.broker == 3      # 3 has the higher log end offset


def test_it_picks_the_leader_when_no_replica_is_in_the_client_s_rack():
    assert rack_aware_select("not-a-rack", REPLICAS, LEADER) == LEADER


def test_it_picks_the_leader_when_the_leader_is_in_the_client_s_rack():
    assert rack_aware_select("rack-a", REPLICAS, LEADER) == LEADER


def test_it_picks_the_leader_for_a_client_without_a_rack():
    assert rack_aware_select("", REPLICAS, LEADER) == LEADER
    assert rack_aware_select(None, REPLICAS, LEADER) == LEADER


def test_ties_go_to_the_replica_caught_up_most_recently_then_to_the_highest_id():
    leader = ReplicaView(1, "a", 10, 0)
    recent, older = ReplicaView(2, "b", 10, 100), ReplicaView(3, "b", 10, 200)
    assert rack_aware_select("b", [leader, older, recent], leader) == recent
    same_a, same_b = ReplicaView(2, "b", 10, 100), ReplicaView(3, "b", 10, 100)
    assert rack_aware_select("b", [leader, same_a, same_b], leader) == same_b


def test_the_leader_is_never_sent_as_the_preferred_replica():
    followers = [r for r in REPLICAS if r != LEADER]

    assert preferred_read_replica(RACK_AWARE, "rack-a", LEADER, followers) == -1
    assert preferred_read_replica(RACK_AWARE, "rack-b", LEADER, followers) == 3
    assert preferred_read_replica(None, "rack-b", LEADER, followers) == -1     # no selector: leader only


@pytest.mark.parametrize("value", [RACK_AWARE, "RackAwareReplicaSelector", "rack-aware", f"  {RACK_AWARE} "])
def test_replica_selector_class_takes_kafka_s_class_name_or_an_alias(value):
    assert selector_class(value) == RACK_AWARE


@pytest.mark.parametrize("value", [None, "", "  "])
def test_no_replica_selector_class_means_leader_only(value):
    assert selector_class(value) is None


def test_an_unknown_replica_selector_class_is_refused_by_name():
    with pytest.raises(InvalidConfigError, match="replica.selector.class"):
        selector_class("com.example.MySelector")
