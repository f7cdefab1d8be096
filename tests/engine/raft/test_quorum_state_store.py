"""The quorum-state file: Kafka's QuorumStateData JSON, replaced whole on every write."""
from __future__ import annotations

import json
import os

import pytest

from engine.raft.quorum_state_store import ElectionState, FileQuorumStateStore


def test_no_file_means_no_state(tmp_path) -> None:
    assert FileQuorumStateStore(str(tmp_path)).read_election_state() is None


def test_a_written_state_reads_back_and_is_kafkas_json(tmp_path) -> None:
    store = FileQuorumStateStore(str(tmp_path))

    store.write_election_state(ElectionState(epoch=7, leader_id=2), [3, 1, 2])

    assert store.read_election_state() == ElectionState(7, 2, -1)
    with open(os.path.join(tmp_path, "quorum-state"), encoding="utf-8") as f:
        line = f.read()
    assert "\n" not in line
    assert json.loads(line) == {"clusterId": "", "leaderId": 2, "leaderEpoch": 7, "votedId": -1,
                                "appliedOffset": 0, "currentVoters": [{"voterId": 1}, {"voterId": 2},
                                                                      {"voterId": 3}], "data_version": 0}
    assert not os.path.exists(os.path.join(tmp_path, "quorum-state.tmp"))


def test_a_newer_write_replaces_the_older(tmp_path) -> None:
    store = FileQuorumStateStore(str(tmp_path))
    store.write_election_state(ElectionState(epoch=3, voted_id=1), [1, 2, 3])

    store.write_election_state(ElectionState(epoch=4, leader_id=3), [1, 2, 3])

    assert store.read_election_state() == ElectionState(4, 3, -1)


@pytest.mark.parametrize("content", ["", "not json", '{"leaderEpoch": 1}', '{"data_version": 9, "leaderEpoch": 1}',
                                     '{"data_version": 0}'])
def test_an_unreadable_file_is_an_error_naming_it(tmp_path, content: str) -> None:
    with open(os.path.join(tmp_path, "quorum-state"), "w", encoding="utf-8") as f:
        f.write(content)

    with pytest.raises(ValueError, match="quorum-state"):
        FileQuorumStateStore(str(tmp_path)).read_election_state()
