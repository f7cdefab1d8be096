"""A restarted replica: its log and quorum-state come back from disk; it never votes twice in an epoch."""
from __future__ import annotations

import json
import os

from engine import events as ev
from engine.raft.messages import VoteRequest, VoteResponse
from engine.raft.quorum_state_store import ElectionState, FileQuorumStateStore
from tests.engine.raft.harness import Quorum


def _answer_vote(quorum: Quorum, node_id: int, request: VoteRequest) -> VoteResponse:
    """Hand node `node_id` a Vote request directly, as if from the candidate, and return its answer."""
    answers: list[object] = []
    handler = quorum.nodes[node_id].raft.request_handlers()[VoteRequest]
    handler(f"controller-{request.candidate_id}", request, lambda body, *a, **k: answers.append(body))
    assert len(answers) == 1 and isinstance(answers[0], VoteResponse)
    return answers[0]


def test_a_restarted_voter_keeps_its_log_and_replays_every_committed_record(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=3, seed=12).start()
    quorum.run_until(quorum.has_stable_leader, 20_000)
    leader = quorum.leader()
    assert leader is not None
    leader.raft.append([b"one", b"two"])
    quorum.run_for(1000)
    follower = next(n for n in quorum.running() if n is not leader)
    before = quorum.log_records(follower.node_id)
    epoch_before = follower.raft.epoch

    quorum.crash(follower.node_id)
    quorum.restart(follower.node_id)

    assert quorum.log_records(follower.node_id) == before
    assert follower.raft.epoch == epoch_before and follower.raft.state == "follower"
    assert quorum.run_until(lambda: follower.raft.high_watermark == leader.raft.high_watermark, 5000)
    assert [v for _, v in quorum.committed_values(follower.node_id)] == [b"one", b"two"]
    assert len(follower.listeners) == 2 and follower.listeners[0].commits == follower.listeners[1].commits


def test_quorum_state_is_written_before_the_vote_is_answered(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=3, seed=13).start()
    voter = quorum.nodes[2]

    answer = _answer_vote(quorum, 2, VoteRequest(candidate_id=3, candidate_epoch=5, last_offset_epoch=0,
                                                 last_offset=0))

    assert answer.vote_granted
    stored = FileQuorumStateStore(voter.log_dir).read_election_state()
    assert stored == ElectionState(epoch=5, leader_id=-1, voted_id=3)
    with open(os.path.join(voter.log_dir, "quorum-state"), encoding="utf-8") as f:
        data = json.loads(f.read())
    assert data["leaderEpoch"] == 5 and data["votedId"] == 3 and data["data_version"] == 0
    assert [v["voterId"] for v in data["currentVoters"]] == [1, 2, 3]


def test_a_voter_restarted_after_voting_does_not_vote_again_in_that_epoch(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=3, seed=14).start()
    request = VoteRequest(candidate_id=3, candidate_epoch=5, last_offset_epoch=0, last_offset=0)
    assert _answer_vote(quorum, 2, request).vote_granted

    quorum.crash(2)
    quorum.restart(2)
    restarted = quorum.nodes[2].raft

    assert (restarted.state, restarted.epoch, restarted.voted_for) == ("voted", 5, 3)
    other = _answer_vote(quorum, 2, VoteRequest(candidate_id=1, candidate_epoch=5, last_offset_epoch=0,
                                                last_offset=0))
    assert not other.vote_granted
    assert _answer_vote(quorum, 2, request).vote_granted     # the same candidate again: the same vote
    refused = [e for e in quorum.events_of(ev.RaftVoteCast) if e.candidate == 1 and e.epoch == 5]
    assert refused and "already voted for 3" in refused[0].reason


def test_a_restarted_leader_comes_back_resigned_and_a_new_epoch_is_elected(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=3, seed=15).start()
    quorum.run_until(quorum.has_stable_leader, 20_000)
    leader = quorum.leader()
    assert leader is not None
    epoch = leader.raft.epoch

    quorum.crash(leader.node_id)
    quorum.restart(leader.node_id)

    assert (leader.raft.state, leader.raft.epoch) == ("resigned", epoch)
    assert leader.listener is not None and leader.listener.leader_changes == []   # not told it leads
    assert quorum.run_until(lambda: quorum.has_stable_leader() and quorum.leader().raft.epoch > epoch,  # type: ignore[union-attr]
                            20_000)


def test_a_voter_refuses_a_candidate_whose_log_is_behind(tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=3, seed=16).start()
    quorum.run_until(quorum.has_stable_leader, 20_000)
    leader = quorum.leader()
    assert leader is not None
    leader.raft.append([b"x"])
    quorum.run_for(1000)
    voter = next(n for n in quorum.running() if n is not leader)
    epoch = voter.raft.epoch

    behind = _answer_vote(quorum, voter.node_id, VoteRequest(candidate_id=leader.node_id, candidate_epoch=epoch + 1,
                                                             last_offset_epoch=epoch, last_offset=1))
    assert not behind.vote_granted
    assert voter.raft.epoch == epoch + 1 and voter.raft.voted_for == -1
    up_to_date = _answer_vote(quorum, voter.node_id, VoteRequest(
        candidate_id=leader.node_id, candidate_epoch=epoch + 1, last_offset_epoch=epoch,
        last_offset=voter.raft.log_end_offset))
    assert up_to_date.vote_granted


def test_a_restarted_leaders_end_quorum_epoch_lets_its_followers_elect_without_waiting_out_the_fetch_timeout(
        tmp_path) -> None:
    quorum = Quorum(str(tmp_path), voters=3, seed=17).start()
    quorum.run_until(quorum.has_stable_leader, 20_000)
    leader = quorum.leader()
    assert leader is not None
    epoch = leader.raft.epoch

    quorum.crash(leader.node_id)
    restarted_at = quorum.scheduler.now_ms
    quorum.restart(leader.node_id)
    assert quorum.run_until(lambda: any(n.raft.epoch > epoch for n in quorum.running()), 10_000)

    # Resigned, it sent EndQuorumEpoch with no successors: a follower stands at once, where without
    # it the follower would wait fetch.timeout.ms after its last answer (at least 2000 - 500 ms).
    started = [e for e in quorum.events_of(ev.RaftElectionStarted) if e.epoch == epoch + 1]
    assert started and started[0].time_ms - restarted_at < 100
    assert any(m.api == "EndQuorumEpoch" for m in quorum.events_of(ev.MessageSent))
