"""The KRaft quorum's requests and answers (KIP-595), one dataclass per message.

Kafka's schemas are clients/src/main/resources/common/message/{Vote,BeginQuorumEpoch,EndQuorumEpoch,
Fetch}{Request,Response}.json; each message here carries the fields of its one partition
(`__cluster_metadata-0`) that the engine reads. Left out on purpose: the cluster id (one cluster per
simulation), topic names/ids (one partition), directory ids and endpoints (static voters, KIP-853's
dynamic quorum is not modelled), snapshot ids (no snapshots: a log is never cleaned).

`leader_id` is -1 when the sender knows no leader in `leader_epoch`, as Kafka's sentinel.
The Raft Fetch is named `RaftFetchRequest` so it does not clash with engine.protocol.FetchRequest
(a partition Fetch); on the wire both are Kafka's FETCH.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from engine.common.errors import Errors

NO_LEADER = -1


@dataclass(frozen=True, slots=True)
class VoteRequest:
    """A candidate asks a voter for its vote in `candidate_epoch` (VoteRequest.json)."""
    candidate_id: int
    candidate_epoch: int
    last_offset_epoch: int      # the epoch of the candidate's last batch
    last_offset: int            # the candidate's log end offset


@dataclass(frozen=True, slots=True)
class VoteResponse:
    error: Errors
    leader_id: int
    leader_epoch: int
    vote_granted: bool


@dataclass(frozen=True, slots=True)
class BeginQuorumEpochRequest:
    """A new leader tells a voter it leads `leader_epoch` (BeginQuorumEpochRequest.json)."""
    leader_id: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class BeginQuorumEpochResponse:
    error: Errors
    leader_id: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class EndQuorumEpochRequest:
    """A resigning leader tells the voters to elect someone else, most caught-up first
    (EndQuorumEpochRequest.json; the preferred successors order the voters' election backoffs)."""
    leader_id: int
    leader_epoch: int
    preferred_successors: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class EndQuorumEpochResponse:
    error: Errors
    leader_id: int
    leader_epoch: int


@dataclass(frozen=True, slots=True)
class RaftFetchRequest:
    """A follower or observer fetches the metadata log from the leader (FetchRequest.json, one
    partition). `replica_id` is -1 for a fetcher that is no replica (Kafka's consumer id)."""
    replica_id: int
    current_leader_epoch: int
    fetch_offset: int           # the fetcher's log end offset
    last_fetched_epoch: int     # the epoch of the fetcher's last batch (0 for an empty log)
    max_wait_ms: int = 500
    max_bytes: int = 8 * 1024 * 1024   # KafkaRaftClient.MAX_FETCH_SIZE_BYTES
    # The high watermark the fetcher knows (-1: none): KAFKA-14145 (Kafka 4.1, FetchRequest v18)
    # lets the leader answer a parked fetch as soon as its high watermark passes this one.
    high_watermark: int = -1


@dataclass(frozen=True, slots=True)
class DivergingEpoch:
    """FetchResponse's DivergingEpoch (KIP-595): the fetcher's log diverges from the leader's after
    `end_offset` in `epoch`; it must truncate there before fetching again."""
    epoch: int
    end_offset: int


@dataclass(frozen=True, slots=True)
class RaftFetchResponse:
    error: Errors
    leader_id: int              # CurrentLeader.LeaderId
    leader_epoch: int           # CurrentLeader.LeaderEpoch
    high_watermark: int = -1    # -1: the leader does not know it yet (a new epoch)
    log_start_offset: int = 0
    diverging_epoch: DivergingEpoch | None = None
    records: bytes = field(default=b"", repr=False)


RAFT_REQUESTS = (VoteRequest, BeginQuorumEpochRequest, EndQuorumEpochRequest, RaftFetchRequest)
