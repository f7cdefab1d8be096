"""ListOffsets: earliest, latest (the high watermark for consumers) and offsets by timestamp."""
from __future__ import annotations

import pytest

from engine import Cluster
from engine.groups.protocol import ListOffsetsPartition, ListOffsetsRequest
from engine.node import Node


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(3, str(tmp_path / "lab"), seed=2)
    c.create_topic("t", 1, 3, replica_assignment=[[1, 2, 3]])
    for value in ("m1", "m2", "m3"):
        c.produce("t", None, value, partition=0)
        c.run_for(10)
    c.run_until_idle()
    yield c
    c.close()


def list_offsets(cluster, broker, timestamp, *, replica_id=-1, epoch=-1):
    client = Node(cluster.world, f"consumer-q{cluster.now_ms}-{timestamp}-{replica_id}")
    answers = []
    client.send(f"broker-{broker}", ListOffsetsRequest(replica_id, 0, [ListOffsetsPartition("t", 0, timestamp, epoch)]),
                answers.append, timeout_ms=30000)
    while not answers:
        cluster.scheduler.step()
    return answers[0].partitions[0]


def test_earliest_is_the_log_start_and_latest_is_the_high_watermark_for_a_consumer(cluster):
    cluster.pause_fetcher(2)
    cluster.pause_fetcher(3)
    cluster.produce("t", None, "above-hw", partition=0, acks=1)
    cluster.run_for(50)
    assert list_offsets(cluster, 1, -2).offset == 0
    assert list_offsets(cluster, 1, -1).offset == 3                      # HW: m4 is not committed
    assert list_offsets(cluster, 1, -1, replica_id=2).offset == 4       # a replica asks for the LEO


def test_a_timestamp_finds_the_first_record_at_or_after_it(cluster):
    records = cluster.read("t", 0)
    answer = list_offsets(cluster, 1, records[1].timestamp)
    assert (answer.offset, answer.timestamp) == (1, records[1].timestamp)
    assert list_offsets(cluster, 1, records[2].timestamp + 1).offset == -1
    assert list_offsets(cluster, 1, -3).offset == 2                     # max timestamp (KIP-734)


def test_only_the_leader_answers_and_stale_epochs_are_fenced(cluster):
    assert list_offsets(cluster, 2, -1).error == "NOT_LEADER_OR_FOLLOWER"
    epoch = cluster.partition_state("t", 0)["leader_epoch"]
    assert list_offsets(cluster, 1, -1, epoch=epoch).error == "NONE"
    assert list_offsets(cluster, 1, -1, epoch=epoch + 1).error == "UNKNOWN_LEADER_EPOCH"
