"""Clients are nodes on the network like the brokers: built from the world, they know the brokers
from their bootstrap list and metadata answers, and a down broker's refusal from the network."""
from __future__ import annotations

from engine.clients.consumer import Consumer
from engine.clients.consumer_app import PollLoop
from engine.clients.producer import Producer
from engine.clients.sinks import sink_for
from engine.cluster import Cluster
from engine.protocol import MetadataRequest


def metadata_requests(events: list, src: str) -> list:
    return [e for e in events if e.kind == "message_sent" and e.api == "Metadata" and e.src == src]


def test_a_producer_asks_its_bootstrap_broker_first_and_then_the_brokers_the_answer_names(tmp_path):
    cluster = Cluster(3, str(tmp_path), seed=4)
    cluster.create_topic("t", 3, 1, replica_assignment=[[1], [2], [3]])
    events: list = []
    cluster.subscribe(events.append)
    producer = Producer(cluster.world, "p", {"linger.ms": 0}, bootstrap=[3])
    cluster.run_for(50)
    assert [e.dst for e in metadata_requests(events, "producer-p")] == ["broker-3"]
    assert producer.sender.metadata.nodes() == [1, 2, 3]
    records = [producer.send("t", None, "v", partition=p) for p in range(3)]
    producer.flush()
    assert [r.offset for r in records] == [0, 0, 0]
    cluster.close()


def test_a_consumer_asking_a_down_broker_is_refused_after_retry_backoff_without_a_message(tmp_path):
    cluster = Cluster(3, str(tmp_path), seed=4)
    consumer = Consumer(cluster.world, "c", {"retry.backoff.ms": 50}, bootstrap=[2])
    cluster.kill_broker(2)
    events: list = []
    cluster.subscribe(events.append)
    answers: list = []
    start = cluster.now_ms
    consumer.send(consumer.least_loaded_broker(), MetadataRequest(None), answers.append)
    cluster.run_for(49)
    assert answers == []
    cluster.run_for(1)
    assert answers == [None] and cluster.now_ms - start == 50
    assert not [e for e in events if e.kind == "message_sent" and e.src == "consumer-c"]
    cluster.close()


def test_a_crashed_consumer_takes_no_answer_of_its_last_life(tmp_path):
    cluster = Cluster(3, str(tmp_path), seed=4)
    consumer = cluster.consumer("c", {})
    answers: list = []
    consumer.send(1, MetadataRequest(None), answers.append)
    consumer.crash()
    cluster.run_for(100)
    assert answers == [] and consumer.client.in_flight() == 0
    cluster.close()


def test_applications_and_sinks_belong_to_their_cluster(tmp_path):
    one, two = Cluster(1, str(tmp_path / "one"), seed=1), Cluster(1, str(tmp_path / "two"), seed=1)
    sink = sink_for(one.sinks, "db", "idempotent")
    assert sink_for(one.sinks, "db") is sink and sink_for(two.sinks, "db") is not sink
    loop = PollLoop(one.consumer("c1", {"group.id": "g"}), sink=sink)
    PollLoop(two.consumer("c1", {"group.id": "g"}))
    assert one.apps == {"c1": loop} and two.apps["c1"] is not loop
    one.close()
    two.close()
