"""Replicating the metadata log: commit by majority, a minority leader that resigns, truncation of a
diverged log after healing, observers that see only committed records."""
from __future__ import annotations

import pytest

from engine import events as ev
from engine.raft.client import NotLeaderError
from tests.engine.raft.harness import Quorum, RaftNode


def _stable(quorum: Quorum) -> RaftNode:
    assert quorum.run_until(quorum.has_stable_leader, 20_000)
    leader = quorum.leader()
    assert leader is not None
    return leader


def test_records_commit_once_a_majority_has_them_and_every_listener_sees_them_in_order(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=3, observers=2, seed=2).start()
    leader = _stable(quorum)

    first = leader.raft.append([b"r1", b"r2"])
    second = leader.raft.append([b"r3"])
    quorum.run_for(2000)

    assert second == first + 1
    for node in quorum.nodes.values():
        assert quorum.committed_values(node.node_id) == [(first - 1, b"r1"), (first, b"r2"), (second, b"r3")]
        assert node.raft.high_watermark == second + 1
    advanced = [e.high_watermark for e in quorum.events_of(ev.MetadataHighWatermarkAdvanced)]
    assert advanced == sorted(advanced) and advanced[-1] == second + 1


def test_only_the_leader_may_append(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=3, observers=1, seed=3).start()
    leader = _stable(quorum)
    others = [n for n in quorum.nodes.values() if n is not leader]

    for node in others:
        with pytest.raises(NotLeaderError) as raised:
            node.raft.append([b"x"])
        assert raised.value.kafka_name == "NOT_LEADER_OR_FOLLOWER"
    with pytest.raises(ValueError):
        leader.raft.append([])
    assert leader.raft.log_end_offset == 1    # only the LeaderChange record


def test_a_leader_cut_off_in_a_minority_cannot_commit_and_resigns(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=3, seed=5).start()
    leader = _stable(quorum)
    hw_before = leader.raft.high_watermark

    quorum.isolate(leader.node_id)
    leader.raft.append([b"lost-1"])
    leader.raft.append([b"lost-2"])
    quorum.run_for(1000)
    assert leader.raft.state == "leader" and leader.raft.high_watermark == hw_before

    # 1.5 x fetch.timeout.ms (3 s) without a Fetch from a majority: it resigns (check quorum).
    quorum.run_for(3000)
    resigned = [e for e in quorum.events_of(ev.RaftLeaderResigned) if e.node == leader.node_id]
    assert resigned and "check quorum" in resigned[0].reason
    assert leader.raft.state != "leader"
    assert leader.raft.high_watermark == hw_before
    assert all(value not in (b"lost-1", b"lost-2") for _, value in quorum.committed_values(leader.node_id))


def test_the_majority_elects_a_new_leader_and_the_old_ones_uncommitted_entries_are_truncated(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=3, seed=6).start()
    old = _stable(quorum)
    old.raft.append([b"committed"])
    quorum.run_for(1000)

    quorum.isolate(old.node_id)
    old.raft.append([b"never-1", b"never-2"])
    quorum.run_until(lambda: any(n.raft.is_leader() for n in quorum.running() if n is not old), 20_000)
    new = next(n for n in quorum.running() if n is not old and n.raft.is_leader())
    new.raft.append([b"after"])
    quorum.run_for(1000)

    quorum.heal_all()
    assert quorum.run_until(lambda: quorum.has_stable_leader()
                            and old.raft.log_end_offset == quorum.leader().raft.log_end_offset   # type: ignore[union-attr]
                            and old.raft.high_watermark == old.raft.log_end_offset, 30_000)

    truncated = [e for e in quorum.events_of(ev.RaftLogTruncated) if e.node == old.node_id]
    assert truncated and truncated[0].to_offset < truncated[0].from_offset
    leader = quorum.leader()
    assert leader is not None
    assert quorum.log_records(old.node_id) == quorum.log_records(leader.node_id)
    values = [v for _, v in quorum.committed_values(old.node_id)]
    assert b"committed" in values and b"after" in values
    assert b"never-1" not in values and b"never-2" not in values


def test_observers_get_records_before_they_commit_but_hand_on_only_committed_ones(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=3, observers=1, seed=8).start()
    leader = _stable(quorum)
    observer = quorum.nodes[101]
    quorum.run_until(lambda: observer.raft.leader_and_epoch().leader_id == leader.node_id, 5000)
    # The leader keeps its observer, loses its voters: what it writes now reaches the observer only.
    for voter in quorum.voter_names:
        if voter != leader.node_id:
            quorum.network.cut(leader.name, quorum.nodes[voter].name)
    hw = leader.raft.high_watermark
    leader.raft.append([b"uncommitted"])
    quorum.run_for(1500)

    assert observer.raft.log_end_offset > hw          # it fetched the record ...
    assert observer.raft.high_watermark <= hw         # ... but no one told it the record committed
    assert b"uncommitted" not in [v for _, v in quorum.committed_values(101)]
    assert 101 not in [s for s in leader.raft.replica_states() if s in quorum.voter_names]


def test_an_observer_finds_the_new_leader_after_a_failover(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=3, observers=1, seed=9).start()
    old = _stable(quorum)
    quorum.crash(old.node_id)
    assert quorum.run_until(quorum.has_stable_leader, 30_000)
    new = quorum.leader()
    assert new is not None

    offset = new.raft.append([b"after-failover"])
    assert quorum.run_until(lambda: quorum.nodes[101].raft.high_watermark > offset, 10_000)
    assert (offset, b"after-failover") in quorum.committed_values(101)
