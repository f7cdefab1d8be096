"""Each broker answers from its own table of handlers: nothing depends on which modules a process imported."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import engine
from engine import Cluster
from engine.node import Node
from engine.protocol import InitProducerIdRequest, InitProducerIdResponse

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(engine.__file__)))


class NoSuchRequest:
    """A request no broker has a handler for."""


def ask(cluster: Cluster, client: Node, broker: int, request: object) -> object:
    answers: list[object] = []
    client.send(f"broker-{broker}", request, answers.append, timeout_ms=30_000)
    while not answers:
        cluster.step()
    return answers[0]


def test_a_broker_in_a_fresh_process_answers_a_raw_init_producer_id(tmp_path):
    # Before per-broker tables, this raised TypeError out of the scheduler unless some module had
    # imported the producer (whose import registered the handler). A fresh process imports only
    # what this program does.
    program = (
        "import json, sys\n"
        "from engine import Cluster\n"
        "from engine.node import Node\n"
        "from engine.protocol import InitProducerIdRequest\n"
        "cluster = Cluster(1, sys.argv[1], seed=3)\n"
        "client = Node(cluster.world, 'client-raw')\n"
        "answers = []\n"
        "client.send('broker-1', InitProducerIdRequest(), answers.append, timeout_ms=30000)\n"
        "while not answers:\n"
        "    cluster.step()\n"
        "print(json.dumps({'error': answers[0].error, 'producer_id': answers[0].producer_id}))\n")
    done = subprocess.run([sys.executable, "-c", program, str(tmp_path / "lab")], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {"error": "NONE", "producer_id": 0}


def test_two_brokers_hand_out_producer_ids_from_blocks_that_do_not_overlap(tmp_path):
    cluster = Cluster(2, str(tmp_path), seed=3)
    client = Node(cluster.world, "client-raw")
    first, second = ask(cluster, client, 1, InitProducerIdRequest()), ask(cluster, client, 2, InitProducerIdRequest())
    again = ask(cluster, client, 1, InitProducerIdRequest())
    assert isinstance(first, InitProducerIdResponse)
    assert (first.producer_id, second.producer_id, again.producer_id) == (0, 1000, 1)
    cluster.close()


def test_a_restarted_broker_claims_a_fresh_block_of_producer_ids(tmp_path):
    cluster = Cluster(1, str(tmp_path), seed=3)
    client = Node(cluster.world, "client-raw")
    assert ask(cluster, client, 1, InitProducerIdRequest()).producer_id == 0
    cluster.kill_broker(1)
    cluster.restart_broker(1)
    cluster.run_until_idle()
    assert ask(cluster, client, 1, InitProducerIdRequest()).producer_id == 1000
    cluster.close()


def test_a_request_no_broker_handles_gets_invalid_request_instead_of_stopping_the_scheduler(tmp_path):
    cluster = Cluster(1, str(tmp_path), seed=3)
    client = Node(cluster.world, "client-raw")
    answer = ask(cluster, client, 1, NoSuchRequest())
    assert (answer.error, answer.request) == ("INVALID_REQUEST", "NoSuchRequest")
    assert ask(cluster, client, 1, InitProducerIdRequest()).error == "NONE"   # the broker carries on
    cluster.close()


def test_brokers_do_not_share_their_handler_tables(tmp_path):
    cluster = Cluster(2, str(tmp_path), seed=3)
    one, two = cluster.brokers[1], cluster.brokers[2]
    assert one.handlers is not two.handlers
    assert one.handlers[InitProducerIdRequest].__self__ is one.producer_ids
    assert two.handlers[InitProducerIdRequest].__self__ is two.producer_ids
    cluster.close()


def test_a_leader_and_isr_with_an_older_leader_epoch_is_ignored_with_stale_controller_epoch(tmp_path):
    """ReplicaManager.becomeLeaderOrFollower: a partition whose requested leader epoch is not newer
    than the one the broker holds is left alone and answered STALE_CONTROLLER_EPOCH (the engine
    used to answer a name Kafka does not have, STALE_LEADER_EPOCH)."""
    from engine.protocol import LeaderAndIsrRequest, LeaderAndIsrResponse, PartitionState
    cluster = Cluster(2, str(tmp_path), seed=3)
    cluster.create_topic("t", 1, 2)
    cluster.run_until_idle()
    broker = cluster.brokers[1]
    held = broker.partitions[("t", 0)]
    epoch, leader = held.leader_epoch, held.leader
    client = Node(cluster.world, "client-raw")
    stale = PartitionState("t", 0, leader=2 if leader == 1 else 1, leader_epoch=epoch - 1, isr=[1, 2],
                           replicas=[1, 2])
    answer = ask(cluster, client, 1, LeaderAndIsrRequest(cluster.controller_id(), broker.controller_epoch_seen,
                                                         [stale]))
    assert isinstance(answer, LeaderAndIsrResponse)
    assert answer.errors == {"t-0": "STALE_CONTROLLER_EPOCH"}
    assert (held.leader_epoch, held.leader) == (epoch, leader)
    cluster.close()
