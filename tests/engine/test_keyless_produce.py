"""Cluster.produce without key or partition (the web form's Produce, a scenario's produce step
without a producer): Kafka's default sticky partitioner (KIP-794), round robin only on request."""
from __future__ import annotations

import pytest

from engine import Cluster
from engine.clients.partitioner import DEFAULT_BATCH_SIZE_BYTES, partition_for_key
from engine.cluster import EPOCH_MS, ClusterError
from engine.scenarios.runner import run_scenario
from engine.storage import record_batch as rb


@pytest.fixture
def cluster(tmp_path):
    c = Cluster(3, str(tmp_path / "lab"), seed=7)
    c.create_topic("t", partitions=3, replication_factor=3)
    yield c
    c.close()


def _runs(partitions: list[int]) -> list[tuple[int, int]]:
    """(partition, records in a row) for each stint on one partition."""
    runs: list[list[int]] = []
    for p in partitions:
        if runs and runs[-1][0] == p:
            runs[-1][1] += 1
        else:
            runs.append([p, 1])
    return [(p, n) for p, n in runs]


def test_records_without_a_key_stay_on_one_partition_until_batch_size_bytes_went_there(cluster):
    values = [f"m-{i:03d}" for i in range(300)]
    partitions = [cluster.produce("t", None, v, acks=1).partition for v in values]

    # Each record goes alone in a batch (61 bytes of header + the record): the sticky partition
    # takes records until their batches add up to batch.size, the one that crosses it included.
    batch_bytes = len(rb.encode_batch([(None, values[0].encode())], base_timestamp=EPOCH_MS))
    first_stint = -(-DEFAULT_BATCH_SIZE_BYTES // batch_bytes)
    assert partitions[:first_stint] == [partitions[0]] * first_stint
    assert _runs(partitions)[0][1] >= first_stint   # the next draw may pick the same partition again
    cluster.run_until_idle()
    assert sum(len(cluster.read("t", p)) for p in range(3)) == 300


def test_the_same_seed_gives_the_same_partitions_and_the_next_draw_is_seeded(tmp_path):
    def partitions(seed: int, name: str) -> list[int]:
        c = Cluster(3, str(tmp_path / name), seed=seed)
        c.create_topic("t", partitions=6, replication_factor=1)
        chosen = [c.produce("t", None, f"v{i}", acks=1).partition for i in range(2000)]
        c.close()
        return chosen

    once, again = partitions(7, "a"), partitions(7, "b")
    assert once == again
    assert len(_runs(once)) > 3          # 2000 small records cross batch.size several times
    assert {p for p, _ in _runs(once)} <= set(range(6))
    assert [_runs(partitions(seed, f"s{seed}"))[0][0] for seed in range(8)] != [once[0]] * 8


def test_round_robin_is_there_when_asked_for(cluster):
    chosen = [cluster.produce("t", None, f"v{i}", partitioner="round-robin").partition for i in range(7)]
    assert [(later - earlier) % 3 for earlier, later in zip(chosen, chosen[1:])] == [1] * 6
    with pytest.raises(ClusterError, match="partitioner must be one of sticky, round-robin") as error:
        cluster.produce("t", None, "v", partitioner="random")
    assert error.value.kafka_name == "INVALID_REQUEST"


def test_a_key_picks_its_partition_by_murmur2_whatever_the_partitioner(cluster):
    for partitioner in ("sticky", "round-robin"):
        for key in ("a", "b", "customer-42"):
            assert cluster.produce("t", key, "v", partitioner=partitioner).partition == \
                partition_for_key(key.encode(), 3)


def test_the_next_sticky_partition_is_drawn_among_partitions_with_a_leader(tmp_path):
    c = Cluster(3, str(tmp_path / "lab"), seed=3)
    c.create_topic("t", partitions=3, replication_factor=1, replica_assignment=[[1], [2], [3]])
    c.kill_broker(2)
    c.kill_broker(3)
    c.run_for(30_000)   # the sessions expire: t-1 and t-2 have no leader
    assert [c.leader_of("t", p) for p in range(3)] == [1, -1, -1]
    chosen = {c.produce("t", None, f"v{i}", acks=1).partition for i in range(1000)}
    assert chosen == {0}
    c.close()


def test_a_scenario_produce_step_without_key_goes_sticky(tmp_path):
    cluster, result = run_scenario({"name": "keyless", "cluster": {"brokers": 3, "seed": 11},
                                    "steps": [{"create_topic": {"topic": "t", "partitions": 4, "replication_factor": 2}},
                                              {"produce": {"topic": "t", "values": [f"m-{i}" for i in range(12)]}},
                                              {"run_until_idle": {}}]},
                                   str(tmp_path / "lab"))
    holding = [p for p in range(4) if cluster.read("t", p)]
    assert len(holding) == 1 and len(cluster.read("t", holding[0])) == 12
    cluster.close()
