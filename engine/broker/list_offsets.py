"""ListOffsets on the partition leader: where "earliest", "latest" or a point in time is in the log.

    -2 (earliest)  the log start offset
    -1 (latest)    a consumer (replica_id -1, read_uncommitted) gets the high watermark, because it
                   can never read above it; read_committed would get the LSO (= HW here, as the lab
                   has no transactions); a replica would get the log end offset
    -3 (max timestamp, KIP-734)  the offset of the record with the largest timestamp
    a timestamp    the first offset whose record timestamp is >= it (Log.offset_for_timestamp),
                   offset -1 if there is none below the fetchable end (Partition.fetchOffsetForTimestamp)

Only the leader answers (NOT_LEADER_OR_FOLLOWER otherwise), with the same leader-epoch fencing
as Fetch (ReplicaManager.fetchOffsetForTimestamp, KafkaApis.handleListOffsetRequest). A request
on the log, not a group one: it lives with the broker.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from engine.common.errors import Errors
from engine.groups.protocol import (
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    ListOffsetsPartition,
    ListOffsetsPartitionResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
)

if TYPE_CHECKING:
    from engine.replication.partition import Partition


def offset_for(partition: Partition, query: ListOffsetsPartition, replica_id: int) -> ListOffsetsPartitionResponse:
    """The answer for one partition this broker leads."""
    log = partition.log
    fetchable_end = log.log_end_offset if replica_id >= 0 else partition.high_watermark
    answer = ListOffsetsPartitionResponse(query.topic, query.partition, Errors.NONE,
                                          leader_epoch=partition.leader_epoch)
    if query.timestamp == EARLIEST_TIMESTAMP:
        answer.offset = log.log_start_offset
    elif query.timestamp == LATEST_TIMESTAMP:
        answer.offset = fetchable_end
    elif query.timestamp == MAX_TIMESTAMP:
        found = _max_timestamp(partition, fetchable_end)
        if found is not None:
            answer.timestamp, answer.offset = found
    elif query.timestamp < 0:
        answer.error = Errors.INVALID_REQUEST
    else:
        offset = log.offset_for_timestamp(query.timestamp)
        if offset is not None and offset < fetchable_end:
            answer.offset = offset
            answer.timestamp = _timestamp_at(partition, offset)
    return answer


def _timestamp_at(partition: Partition, offset: int) -> int:
    records = partition.log.read(offset, 1, max_offset=offset + 1)
    return records[0].timestamp if records else -1


def _max_timestamp(partition: Partition, end: int) -> tuple[int, int] | None:
    best: tuple[int, int] | None = None
    for record in partition.log.records_from(partition.log.log_start_offset):
        if record.offset >= end:
            break
        if best is None or record.timestamp > best[0]:
            best = (record.timestamp, record.offset)
    return best


def list_offsets(partitions: Mapping[tuple[str, int], Partition], request: ListOffsetsRequest) -> ListOffsetsResponse:
    """The answer to a ListOffsets request, from the broker's replicas (`partitions`)."""
    out = []
    for query in request.partitions:
        partition = partitions.get((query.topic, query.partition))
        if partition is None or partition.role != "leader":
            out.append(ListOffsetsPartitionResponse(query.topic, query.partition, Errors.NOT_LEADER_OR_FOLLOWER))
        elif query.current_leader_epoch >= 0 and query.current_leader_epoch != partition.leader_epoch:
            error = Errors.FENCED_LEADER_EPOCH if query.current_leader_epoch < partition.leader_epoch \
                else Errors.UNKNOWN_LEADER_EPOCH
            out.append(ListOffsetsPartitionResponse(query.topic, query.partition, error))
        else:
            out.append(offset_for(partition, query, request.replica_id))
    return ListOffsetsResponse(out)


def summary(response: ListOffsetsResponse) -> dict:
    """What the event log shows of the answer."""
    return {"partitions": [{"topic": a.topic, "partition": a.partition, "error": a.error, "offset": a.offset}
                           for a in response.partitions]}
