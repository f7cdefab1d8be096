"""What the lab's HTTP read API serves, computed from a cluster: committed data only.

Used by the web layer's `/api/v1/...` views, which the Spark data source calls from its
executors. Two questions, as a Kafka consumer would ask them:
- which partitions does a topic have, and for each: where does its log start, where is its high
  watermark (records below it are committed; nothing above it is ever served);
- give me the raw record batches from offset N, whole batches, all below the high watermark
  (the client decodes them and drops records before N, as consumers do).
"""
from __future__ import annotations

from dataclasses import dataclass

from engine.cluster import Cluster, ClusterError
from engine.common.errors import Errors
from engine.storage.errors import OffsetOutOfRangeError
from engine.topic_pattern import TopicPattern

MAX_READ_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class PartitionInfo:
    topic: str
    partition: int
    leader: int
    log_start_offset: int
    high_watermark: int

    def to_dict(self) -> dict:
        return {"topic": self.topic, "partition": self.partition, "leader": self.leader,
                "log_start_offset": self.log_start_offset, "high_watermark": self.high_watermark}


@dataclass(frozen=True, slots=True)
class CommittedBatches:
    records: bytes          # raw v2 record batches, whole, all below the high watermark
    next_offset: int        # where to read next (== the requested offset if nothing was returned)
    log_start_offset: int
    high_watermark: int


def list_partitions(cluster: Cluster, topics: list[str] | None = None, pattern: str | None = None
                    ) -> list[PartitionInfo]:
    """The partitions of the named topics (or of every topic whose name fully matches `pattern`, a
    regular expression as Kafka's subscribe(Pattern) takes — run by engine.topic_pattern, in time
    linear in the name, never by `re`: it comes from a URL. Raises PatternError, a ValueError)."""
    if pattern is not None:
        matcher = TopicPattern(pattern)
        names = [t for t in cluster.list_topics() if matcher.fullmatch(t)]
    else:
        names = list(topics or cluster.list_topics())
    out = []
    for topic in names:
        if topic not in cluster.topics:
            raise ClusterError(f"Topic '{topic}' does not exist", Errors.UNKNOWN_TOPIC_OR_PARTITION)
        for p in range(cluster.topics[topic].partitions):
            leader = cluster.leader_of(topic, p)
            part = cluster.brokers[leader].partitions.get((topic, p)) if leader >= 0 else None
            if part is None or part.role != "leader":
                out.append(PartitionInfo(topic, p, -1, -1, -1))
            else:
                out.append(PartitionInfo(topic, p, leader, part.log.log_start_offset, part.high_watermark))
    return out


def read_committed(cluster: Cluster, topic: str, partition: int, offset: int,
                   max_bytes: int = 1024 * 1024) -> CommittedBatches:
    """Whole batches from `offset`, below the leader's HW. Raises ClusterError
    (OFFSET_OUT_OF_RANGE, LEADER_NOT_AVAILABLE, UNKNOWN_TOPIC_OR_PARTITION)."""
    if topic not in cluster.topics or not 0 <= partition < cluster.topics[topic].partitions:
        raise ClusterError(f"Unknown topic-partition {topic}-{partition}", Errors.UNKNOWN_TOPIC_OR_PARTITION)
    leader = cluster.leader_of(topic, partition)
    part = cluster.brokers[leader].partitions.get((topic, partition)) if leader >= 0 else None
    if part is None or part.role != "leader":
        raise ClusterError(f"{topic}-{partition} has no leader right now", Errors.LEADER_NOT_AVAILABLE)
    log, hw = part.log, part.high_watermark
    if offset < log.log_start_offset or offset > hw:
        raise ClusterError(f"Offset {offset} is out of range for {topic}-{partition}: committed records "
                           f"are [{log.log_start_offset}, {hw})", Errors.OFFSET_OUT_OF_RANGE)
    try:
        data = log.read_batches(offset, min(max(max_bytes, 1), MAX_READ_BYTES), max_offset=hw)
    except OffsetOutOfRangeError as error:
        raise ClusterError(str(error), Errors.OFFSET_OUT_OF_RANGE) from None
    return CommittedBatches(data.records, data.next_offset, log.log_start_offset, hw)
