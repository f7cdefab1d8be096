"""Issue 11, finding 6: every record Cluster.produce sent was kept for good (`Cluster.produced`):
~40 MB a virtual minute for a session producing at the lab's legal rate, never released. The
cluster now keeps the newest PRODUCED_KEPT sends and every older one still unanswered; its
length still counts every send, and the readers (state()["produced"], the Jepsen checker, the
timers' waiting produce requests) see what they need."""
from __future__ import annotations

from pathlib import Path

from engine import Cluster
from engine.inspect.cluster import cluster_state
from engine.produced_log import PRODUCED_KEPT


def _cluster(tmp_path: Path) -> Cluster:
    cluster = Cluster(3, str(tmp_path), seed=5, config={"offsets.topic.num.partitions": 1})
    cluster.create_topic("t", 1, 3)
    cluster.run_until_idle()
    return cluster


def test_the_cluster_keeps_only_the_newest_sends_and_counts_them_all(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path)
    sends = PRODUCED_KEPT + 500
    for i in range(sends):
        cluster.produce("t", None, f"m{i}", acks=1)
        if i % 500 == 499:
            cluster.run_until_idle()
    cluster.run_until_idle()

    kept = list(cluster.produced)
    state = cluster_state(cluster)
    assert len(cluster.produced) == sends                       # every send counted (produced_count)
    assert len(kept) == PRODUCED_KEPT and kept[0].value == b"m500" and kept[-1].value == f"m{sends - 1}".encode()
    assert [r["value"] for r in state["produced"]][:1] == ["m500"] and len(state["produced"]) == PRODUCED_KEPT
    assert state["produced_left_out"] == 500
    assert cluster.produce("t", None, "next", acks=1).request_id == sends + 1
    cluster.close()


def test_an_older_send_still_unanswered_is_kept_until_its_answer(tmp_path: Path) -> None:
    cluster = _cluster(tmp_path)
    cluster.produced.keep = 3
    leader = cluster.leader_of("t", 0)
    for broker in cluster.brokers:
        if broker != leader:
            cluster.pause_fetcher(broker)     # acks=all waits for followers that do not fetch
    waiting = cluster.produce("t", None, "waits", acks="all")
    for i in range(5):
        cluster.produce("t", None, f"quick{i}", acks=0)
    cluster.run_for(100)

    assert [r.value for r in cluster.produced] == [b"waits", b"quick2", b"quick3", b"quick4"]
    assert list(reversed(cluster.produced))[-1] is waiting
    assert cluster.produced.left_out() == 2
    for broker in cluster.brokers:
        if broker != leader:
            cluster.resume_fetcher(broker)
    cluster.run_until_idle()
    cluster.produce("t", None, "after", acks=0)

    assert waiting.acked is True
    assert [r.value for r in cluster.produced] == [b"quick3", b"quick4", b"after"]
    cluster.close()


def test_a_named_producer_keeps_only_the_newest_sends_and_counts_them_all(tmp_path: Path) -> None:
    # The same leak through a named producer (a batching client): its record of sends was a list
    # that only grew, copied whole every time the lab's model was built.
    cluster = _cluster(tmp_path)
    producer = cluster.producer("p", {"acks": "all", "linger.ms": 0})
    producer._records.keep = 50
    for i in range(230):
        producer.send("t", None, f"m{i}")
        if i % 20 == 19:
            cluster.run_until_idle()
    cluster.run_until_idle()
    kept = producer.produced()
    assert producer.sent_count() == 230
    assert len(kept) == 50 and kept[-1].value == b"m229" and kept[0].value == b"m180"
    assert producer.metrics()["records-acknowledged-total"] == 230   # counts the forgotten ones too
    assert producer.send("t", None, "next").record_id == 231   # ids go on counting every send
    cluster.close()


def test_a_producer_that_stops_after_a_flush_lets_go_of_the_sends_that_were_in_flight(tmp_path: Path) -> None:
    # Sent faster than answered, every send past the newest `keep` waited in the older-unanswered
    # queue; only a later send() used to release the answered ones, so an idle producer held them all.
    cluster = _cluster(tmp_path)
    producer = cluster.producer("p", {"acks": "all"})
    producer._records.keep = 50
    producer.send_batch("t", [(None, f"m{i}") for i in range(300)])
    assert len(producer._records._older_unanswered) == 250   # none answered yet
    producer.flush()
    assert len(producer._records._older_unanswered) == 0 and len(producer.produced()) == 50
    assert producer.sent_count() == 300 and producer.metrics()["records-acknowledged-total"] == 300
    cluster.close()
