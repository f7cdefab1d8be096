"""What a running rebalance waits for, as the lab shows it: describe_group's `rebalance`, the
`member_joined` of a member that rejoins, and what `assignment_received` says a member had before."""
from __future__ import annotations

import pytest

from engine import Cluster
from engine.inspect.groups import describe_group


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(3, str(tmp_path / "lab"), seed=41,
                config={"offsets.topic.num.partitions": 4, "group.initial.rebalance.delay.ms": 0})
    c.create_topic("t", 3, 3)
    events = []
    c.subscribe(events.append)
    c.events = events
    yield c
    c.close()


def joined(cluster, name, **extra):
    """A consumer that polls only when the test says so (as a blocked application would)."""
    c = cluster.consumer(name, {"group.id": "g", "enable.auto.commit": False, "max.poll.interval.ms": 60_000,
                                "partition.assignment.strategy": "range", **extra})
    c.subscribe(["t"])
    return c


def poll_until_stable(cluster, *consumers, limit_ms=30_000):
    end = cluster.now_ms + limit_ms
    while not all(c.is_stable() for c in consumers) or describe_group(cluster, "g")["state"] != "Stable":
        assert cluster.now_ms < end, describe_group(cluster, "g")
        for c in consumers:
            c.poll(timeout_ms=100)


def of_kind(cluster, kind, **match):
    return [e for e in cluster.events if e.kind == kind and all(getattr(e, k) == v for k, v in match.items())]


def test_a_stable_group_has_no_rebalance_to_describe(cluster):
    c1 = joined(cluster, "c1")
    poll_until_stable(cluster, c1)
    assert "rebalance" not in describe_group(cluster, "g")


def test_a_rebalance_names_who_rejoined_who_is_awaited_and_until_when(cluster):
    c1 = joined(cluster, "c1")
    poll_until_stable(cluster, c1)
    c2 = joined(cluster, "c2")
    while describe_group(cluster, "g")["state"] != "PreparingRebalance":
        c2.poll(timeout_ms=10)
    started = of_kind(cluster, "rebalance_started", generation=1)[0].time_ms
    rebalance = describe_group(cluster, "g")["rebalance"]
    # c2's JoinGroup waits at the coordinator; c1 has not polled since, so it has not rejoined.
    assert rebalance == {"phase": "join", "since_ms": started, "deadline_ms": started + 60_000, "timeout_ms": 60_000,
                         "initial": False, "joined": ["c2"], "awaited": ["c1"], "new": ["c2"], "pending_member_ids": 0,
                         "leader": "c1", "sync_awaited": []}
    # c1 hears of the rebalance in a heartbeat answer and rejoins at its next poll: the join phase ends.
    poll_until_stable(cluster, c1, c2)
    rejoin = of_kind(cluster, "member_joined", client_id="c1", rejoined=True)
    assert len(rejoin) == 1 and rejoin[0].member_id == c1.member_id
    assert of_kind(cluster, "member_joined", client_id="c2")[0].rejoined is False
    assert "rebalance" not in describe_group(cluster, "g")


def test_the_join_phase_of_a_new_group_waits_the_initial_delay(tmp_path):
    c = Cluster(3, str(tmp_path / "lab"), seed=41, config={"offsets.topic.num.partitions": 4})
    c.create_topic("t", 1, 3)
    c1 = joined(c, "c1")
    while describe_group(c, "g")["state"] != "PreparingRebalance":
        c1.poll(timeout_ms=10)
    rebalance = describe_group(c, "g")["rebalance"]
    assert rebalance["initial"] is True and rebalance["joined"] == ["c1"] and rebalance["awaited"] == []
    assert rebalance["deadline_ms"] == rebalance["since_ms"] + 3000      # group.initial.rebalance.delay.ms
    c.close()


def test_an_eager_member_says_what_it_owned_before_the_rebalance(cluster):
    c1 = joined(cluster, "c1")
    poll_until_stable(cluster, c1)
    first = of_kind(cluster, "assignment_received", consumer="c1")[-1]
    assert (first.assignment, first.added, first.previous) == (["t-0", "t-1", "t-2"], ["t-0", "t-1", "t-2"], [])
    c2 = joined(cluster, "c2")
    poll_until_stable(cluster, c1, c2)
    second = of_kind(cluster, "assignment_received", consumer="c1")[-1]
    # Eager: c1 revoked all three before rejoining, so `added` is all it owns; `previous` says what it had.
    assert second.assignment == ["t-0", "t-1"] and second.added == ["t-0", "t-1"] and second.revoked == []
    assert second.previous == ["t-0", "t-1", "t-2"]
    assert of_kind(cluster, "assignment_received", consumer="c2")[-1].previous == []
