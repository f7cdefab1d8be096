"""What the Raft client tells the state machine above it (RaftClient.Listener in Kafka).

- `handle_commit(base_offset, epoch, values, control)`: every committed batch (its first offset, the
  Raft epoch that wrote it, its record values in offset order, whether it is a control batch), in
  offset order, exactly once per offset in one incarnation of the client, starting from the
  beginning of the log after each start (there are no snapshots, so a restarted listener replays
  the whole committed log). Control batches (LeaderChangeMessage) are handed on too, `control`
  True, as Kafka's BatchReader hands on their offsets; a state machine skips them.
- `handle_leader_change(leader_id, epoch)`: the leader or the epoch changed (leader_id -1: none
  known in that epoch yet). Epochs only grow; for one epoch it is called at most twice (unknown
  leader, then the leader). When this node itself became leader, the call waits until the listener
  has been handed every batch before the leader's epoch start (KafkaRaftClient's
  ListenerContext.maybeFireLeaderChange(leader, epochStartOffset)): a quorum controller that hears
  "you lead" has replayed everything committed before it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class CommittedBatch:
    """One batch of the metadata log (Kafka's raft Batch), as the client reads it back."""
    base_offset: int
    last_offset: int
    epoch: int                  # the batch's partitionLeaderEpoch: the Raft epoch that wrote it
    records: tuple[bytes, ...]  # the record values (control batches: the control records' values)
    is_control: bool
    append_timestamp: int

    @property
    def offsets(self) -> range:
        return range(self.base_offset, self.last_offset + 1)


class RaftListener(Protocol):
    def handle_commit(self, base_offset: int, epoch: int, values: list[bytes], control: bool) -> None: ...
    def handle_leader_change(self, leader_id: int, epoch: int) -> None: ...
