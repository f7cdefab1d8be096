"""The follower-fetching scenario shows what it says: reader-b reads from broker 2, later than reader-a, back
from the leader while broker 2 is down, and from broker 2 again once it is back in the ISR."""
from __future__ import annotations

import pytest

from engine import events as ev
from engine.scenarios import load_scenario, run_scenario
from engine.scenarios.runner import ScenarioError, validate


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    events: list[ev.Event] = []
    cluster, _ = run_scenario(load_scenario("follower-fetching"), str(tmp_path_factory.mktemp("ff")),
                              trace=events.append)
    cluster.close()
    return events


def consumed_at(events, consumer: str, value: str) -> int:
    return next(e.time_ms for e in events if isinstance(e, ev.RecordsConsumed) and e.consumer == consumer
                and any(r["value"] == value for r in e.records))


def test_reader_b_is_sent_to_the_follower_in_its_rack_and_reads_there(played):
    first = next(e for e in played if isinstance(e, ev.PreferredReadReplicaChanged))
    assert (first.consumer, first.replica, first.leader) == ("reader-b", 2, 1)
    fetches = {e.dst for e in played if isinstance(e, ev.MessageSent) and e.api == "Fetch"
               and e.src == "consumer-reader-b" and e.time_ms > first.time_ms and e.time_ms < 13000}
    assert fetches == {"broker-2"}


def test_an_acks_1_record_reaches_the_leader_reader_first(played):
    assert consumed_at(played, "reader-a", "m2") < consumed_at(played, "reader-b", "m2")


def test_reader_b_falls_back_to_the_leader_and_returns_to_broker_2(played):
    moves = [(e.replica, e.previous) for e in played if isinstance(e, ev.PreferredReadReplicaChanged)]
    assert moves[:2] == [(2, -1), (-1, 2)]
    assert moves[-1] == (2, -1)
    assert consumed_at(played, "reader-b", "m3") and consumed_at(played, "reader-b", "m4")


def test_a_scenario_with_a_rack_for_an_unknown_broker_is_refused():
    scenario = {"cluster": {"brokers": 3, "config": {"broker.rack": {"4": "x"}}}, "steps": []}
    with pytest.raises(ScenarioError, match="broker.rack.*broker 4 is not in this cluster"):
        validate(scenario)
