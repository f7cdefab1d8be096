"""The `quorum-state` file: a voter's election state, which must survive a restart.

As Kafka's FileQuorumStateStore: one line of JSON (QuorumStateData, version 0 — static voters,
kraft.version 0), written to `quorum-state.tmp`, fsynced, then renamed over `quorum-state`, so a
crash leaves the old state or the new one, never half of one. QuorumState writes it on every
durable transition *before* acting on it (durableTransitionTo): a voter that granted its vote and
then crashed must remember the vote, or it could vote twice in one epoch.

    {"clusterId":"","leaderId":1,"leaderEpoch":3,"votedId":-1,"appliedOffset":0,
     "currentVoters":[{"voterId":1},{"voterId":2},{"voterId":3}],"data_version":0}

`ElectionState` is Kafka's ElectionState: the epoch, and the leader or the voted candidate of it
(-1 when none). A Resigned leader is stored as the leader of its epoch (Resigned is a soft state:
QuorumState starts a restarted leader as Resigned).
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass

FILE_NAME = "quorum-state"
DATA_VERSION = 0
NONE = -1


@dataclass(frozen=True, slots=True)
class ElectionState:
    epoch: int
    leader_id: int = NONE
    voted_id: int = NONE

    @property
    def has_leader(self) -> bool:
        return self.leader_id >= 0

    @property
    def has_voted(self) -> bool:
        return self.voted_id >= 0


class FileQuorumStateStore:
    def __init__(self, directory: str, *, fsync: bool = False) -> None:
        self.path = os.path.join(directory, FILE_NAME)
        self._fsync = fsync

    def read_election_state(self) -> ElectionState | None:
        """The stored state, or None if the file does not exist (a new voter). A file that cannot
        be read is an error naming it: a voter must not forget a vote silently."""
        if not os.path.exists(self.path):
            return None
        with open(self.path, encoding="utf-8") as f:
            line = f.readline()
        try:
            data = json.loads(line)
        except json.JSONDecodeError as e:
            raise ValueError(f"{self.path}: not a quorum state ({e})") from None
        if not isinstance(data, dict) or "data_version" not in data:
            raise ValueError(f"{self.path}: no data_version field")
        if data["data_version"] != DATA_VERSION:
            raise ValueError(f"{self.path}: data_version {data['data_version']} is not {DATA_VERSION}")
        try:
            return ElectionState(int(data["leaderEpoch"]), int(data.get("leaderId", NONE)),
                                 int(data.get("votedId", NONE)))
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"{self.path}: bad quorum state field ({e})") from None

    def write_election_state(self, state: ElectionState, voters: list[int]) -> None:
        data = {"clusterId": "", "leaderId": state.leader_id, "leaderEpoch": state.epoch,
                "votedId": state.voted_id, "appliedOffset": 0,
                "currentVoters": [{"voterId": v} for v in sorted(voters)], "data_version": DATA_VERSION}
        temp = self.path + ".tmp"
        with open(temp, "w", encoding="utf-8") as f:
            f.write(json.dumps(data, separators=(",", ":")))
            f.flush()
            if self._fsync:
                os.fsync(f.fileno())
        os.replace(temp, self.path)
