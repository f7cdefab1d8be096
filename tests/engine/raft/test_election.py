"""Raft elections in the KRaft quorum: one leader per epoch, a new one with a higher epoch when it dies."""
from __future__ import annotations

from engine import events as ev
from engine.raft.control import LEADER_CHANGE, control_record_type, decode_leader_change
from tests.engine.raft.harness import Quorum


def test_a_single_voter_elects_itself_and_commits_at_once(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=1).start()

    assert quorum.run_until(quorum.has_stable_leader, 5000)
    leader = quorum.nodes[1].raft
    offset = leader.append([b"x"])

    assert (leader.state, leader.epoch) == ("leader", 1)
    assert leader.high_watermark == offset + 1
    assert quorum.committed_values(1) == [(offset, b"x")]


def test_three_voters_elect_one_leader_which_writes_a_leader_change_record_first(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=3, seed=4).start()

    assert quorum.run_until(quorum.has_stable_leader, 10_000)
    leader = quorum.leader()
    assert leader is not None and leader.raft.epoch == 1
    assert [n.raft.state for n in quorum.running()].count("leader") == 1
    first = leader.raft.metadata_log.batches()[0]
    assert first.is_control and first.epoch == 1 and first.base_offset == 0
    elected = quorum.events_of(ev.RaftLeaderElected)
    assert [(e.node, e.epoch) for e in elected] == [(leader.node_id, 1)]
    message = decode_leader_change(first.records[0])
    assert message.leader_id == leader.node_id and message.voters == (1, 2, 3)
    assert set(message.granting_voters) == set(elected[0].granting_voters) and len(message.granting_voters) >= 2


def test_the_leader_change_record_has_kafkas_control_key(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=1).start()
    quorum.run_until(quorum.has_stable_leader, 5000)

    records = quorum.nodes[1].raft.log.read(0)

    assert control_record_type(records[0].key) == LEADER_CHANGE


def test_killing_the_leader_elects_another_with_a_higher_epoch(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=3, seed=1).start()
    quorum.run_until(quorum.has_stable_leader, 10_000)
    old = quorum.leader()
    assert old is not None
    old_epoch = old.raft.epoch

    quorum.crash(old.node_id)

    assert quorum.run_until(quorum.has_stable_leader, 20_000)
    new = quorum.leader()
    assert new is not None and new.node_id != old.node_id
    assert new.raft.epoch > old_epoch
    # A follower waits fetch.timeout.ms (2 s) without its leader before standing for election.
    started = [e for e in quorum.events_of(ev.RaftElectionStarted) if e.epoch > old_epoch]
    assert started and started[0].time_ms >= 2000


def test_every_vote_is_one_vote_per_voter_per_epoch(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=5, seed=7).start()
    quorum.run_until(quorum.has_stable_leader, 20_000)
    quorum.crash(quorum.leader().node_id)    # type: ignore[union-attr]
    quorum.run_until(quorum.has_stable_leader, 20_000)

    granted: dict[tuple[int, int], set[int]] = {}
    for vote in quorum.events_of(ev.RaftVoteCast):
        if vote.granted:
            granted.setdefault((vote.voter, vote.epoch), set()).add(vote.candidate)
    assert granted and all(len(candidates) == 1 for candidates in granted.values())


def test_the_same_seed_gives_the_same_events(tmp_path) -> None:
    def run(directory: str) -> list[dict]:
        quorum = Quorum(directory, voters=3, observers=1, seed=11).start()
        quorum.run_until(quorum.has_stable_leader, 10_000)
        leader = quorum.leader()
        assert leader is not None
        leader.raft.append([b"a", b"b"])
        quorum.crash(leader.node_id)
        quorum.run_for(8000)
        return [{k: v for k, v in e.to_dict().items()} for e in quorum.events]

    first, second = run(str(tmp_path / "a")), run(str(tmp_path / "b"))

    assert first == second
    assert any(e["kind"] == "raft_leader_elected" for e in first)
