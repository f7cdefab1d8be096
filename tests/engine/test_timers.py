"""engine.timers: every timer it names fires when it says — checked against the events the engine
publishes when the timer's action runs, one scheduler step at a time."""
from __future__ import annotations

from engine import Cluster
from engine.clients.consumer_app import PollLoop
from engine.scenarios.runner import run_step
from engine.scenarios.schema import check_step
from engine.timers import pending_timers


def apply(cluster, command, **args):
    run_step(cluster, command, check_step(command, args), 0)


def stepping(cluster, until, max_ms=120_000):
    """Step until an event matches `until`; return that event and every timer seen on the way,
    as {(kind, subject): [due_ms, ...]} (each due time it announced, in order)."""
    seen, hits = {}, []
    unsubscribe = cluster.subscribe(lambda e: hits.append(e) if until(e) else None)
    end = cluster.now_ms + max_ms
    try:
        while not hits:
            for t in pending_timers(cluster):
                dues = seen.setdefault((t["kind"], t["subject"]), [])
                if not dues or dues[-1] != t["due_ms"]:
                    dues.append(t["due_ms"])
            assert cluster.scheduler.next_time() is not None and cluster.now_ms <= end, "the event never came"
            cluster.step()
    finally:
        unsubscribe()
    return hits[0], seen


def of_kind(kind, **match):
    return lambda e: e.kind == kind and all(getattr(e, k) == v for k, v in match.items())


def three_brokers(tmp_path, seed=1):
    cluster = Cluster(brokers=3, data_dir=str(tmp_path / "c"), seed=seed)
    cluster.create_topic("t", 1, 3, replica_assignment=[[1, 2, 3]])
    cluster.produce("t", "k", "m1", acks="all")
    cluster.run_until_idle()
    return cluster


def test_a_quiet_cluster_waits_for_nothing(tmp_path):
    cluster = three_brokers(tmp_path)
    cluster.run_for(40_000)
    assert pending_timers(cluster) == []


def test_a_killed_broker_is_noticed_when_its_zookeeper_session_expires(tmp_path):
    cluster = three_brokers(tmp_path)
    assert cluster.controller_id() == 1 and cluster.leader_of("t", 0) == 1
    crashed_at = cluster.now_ms
    cluster.kill_broker(1)
    timers = {t["kind"]: t for t in pending_timers(cluster)}
    assert set(timers) == {"session_expiry", "controller_election", "leader_election"}
    expiry = timers["session_expiry"]
    assert expiry["subject"] == "broker-1" and expiry["setting"] == "zookeeper.session.timeout.ms"
    assert expiry["value_ms"] == 18_000 and expiry["due_ms"] == crashed_at + 18_000
    assert timers["leader_election"]["subject"] == "t-0"

    events = []
    cluster.subscribe(events.append)
    expired, seen = stepping(cluster, of_kind("broker_session_expired", broker=1))
    assert expired.time_ms == expiry["due_ms"] and seen[("session_expiry", "broker-1")] == [expiry["due_ms"]]
    # The controller election and the leader election follow within the store's watch latency.
    elected, _ = stepping(cluster, of_kind("leader_elected", topic="t"))
    controller = next(e for e in events if e.kind == "controller_elected")
    assert expiry["due_ms"] <= controller.time_ms <= elected.time_ms <= expiry["due_ms"] + 10
    assert pending_timers(cluster) == []


def test_a_broker_back_within_its_session_cancels_the_timer(tmp_path):
    cluster = three_brokers(tmp_path)
    cluster.kill_broker(3)
    assert [t["kind"] for t in pending_timers(cluster)] == ["session_expiry", "isr_shrink"]
    cluster.restart_broker(3)
    assert pending_timers(cluster) == []


def test_a_paused_follower_leaves_the_isr_when_the_timer_said(tmp_path):
    cluster = three_brokers(tmp_path)
    cluster.pause_fetcher(3)
    cluster.produce("t", "k", "m2", acks=1)
    shrunk, seen = stepping(cluster, of_kind("isr_shrunk", topic="t"))
    assert shrunk.removed == [3]
    dues = seen[("isr_shrink", "t-0: broker 3")]
    assert dues == [shrunk.time_ms]                # announced once, and right
    assert pending_timers(cluster) == []


def test_followers_that_keep_up_under_load_are_not_announced(tmp_path):
    cluster = three_brokers(tmp_path)
    for i in range(40):
        cluster.produce("t", "k", f"m{i}", acks="all")
        cluster.run_for(250)
        assert pending_timers(cluster) == [], i


def test_an_isr_shrink_is_announced_at_the_check_after_the_lag_time(tmp_path):
    cluster = Cluster(brokers=2, data_dir=str(tmp_path / "c"), seed=4,
                      config={"replica.lag.time.max.ms": 10_000})
    cluster.create_topic("t", 1, 2, replica_assignment=[[1, 2]])
    cluster.run_until_idle()
    cluster.run_for(3_000)
    cluster.pause_fetcher(2)
    cluster.produce("t", None, "m1", acks=1)
    cluster.run_for(2_000)
    (timer,) = pending_timers(cluster)
    assert timer["setting"] == "replica.lag.time.max.ms" and timer["value_ms"] == 10_000
    behind_since = cluster.brokers[1].partitions[("t", 0)].followers[2].last_caught_up_ms
    assert timer["due_ms"] > behind_since + 10_000 and (timer["due_ms"] - behind_since - 10_000) <= 5_000
    shrunk, _ = stepping(cluster, of_kind("isr_shrunk"))
    assert shrunk.time_ms == timer["due_ms"]


def test_an_acks_all_request_waiting_for_the_isr_times_out_when_the_timer_said(tmp_path):
    cluster = three_brokers(tmp_path)
    cluster.pause_fetcher(3)
    cluster.produce("t", "k", "m2", acks="all")
    cluster.run_for(1_000)
    (timer,) = [t for t in pending_timers(cluster) if t["kind"] == "produce_timeout"]
    assert "purgatory" in timer["text"]
    assert timer["subject"] == "t-0" and timer["setting"] == "request.timeout.ms"
    failed, _ = stepping(cluster, of_kind("produce_failed"))
    assert failed.error == "REQUEST_TIMED_OUT" and failed.time_ms == timer["due_ms"]


def group_of_two(tmp_path, **c2_config):
    cluster = Cluster(brokers=3, data_dir=str(tmp_path / "c"), seed=6)
    apply(cluster, "create_topic", topic="t", partitions=2, replication_factor=3)
    apply(cluster, "consumer_join", member="c1", group="g", topics=["t"], poll_every_ms=100)
    apply(cluster, "consumer_join", member="c2", group="g", topics=["t"], poll_every_ms=100,
          config={"session.timeout.ms": 10_000, **c2_config})
    cluster.run_for(5_000)
    return cluster


def test_a_new_group_waits_the_initial_rebalance_delay(tmp_path):
    cluster = Cluster(brokers=3, data_dir=str(tmp_path / "c"), seed=6)
    apply(cluster, "create_topic", topic="t", partitions=2, replication_factor=3)
    consumer = cluster.consumer("c1", {"group.id": "g"})
    consumer.subscribe(["t"])
    PollLoop(consumer, poll_interval_ms=100).start()
    formed, seen = stepping(cluster, of_kind("group_state_changed", group="g", state="CompletingRebalance"))
    (dues,) = [d for (kind, _), d in seen.items() if kind == "initial_rebalance_delay"]
    assert dues == [formed.time_ms]


def test_a_crashed_consumer_is_removed_when_its_session_times_out(tmp_path):
    cluster = group_of_two(tmp_path)
    assert pending_timers(cluster) == []           # both heartbeat and poll: nothing to wait for
    apply(cluster, "consumer_crash", member="c2")
    (timer,) = pending_timers(cluster)
    assert timer["kind"] == "member_session" and timer["subject"] == "c2 in group g"
    assert timer["setting"] == "session.timeout.ms" and timer["value_ms"] == 10_000
    assert cluster.now_ms < timer["due_ms"] <= cluster.now_ms + 10_000
    removed, _ = stepping(cluster, of_kind("member_removed", client_id="c2"))
    assert "session timeout" in removed.reason and removed.time_ms == timer["due_ms"]


def test_members_that_do_not_rejoin_are_removed_at_the_rebalance_timeout(tmp_path):
    cluster = Cluster(brokers=3, data_dir=str(tmp_path / "c"), seed=6)
    apply(cluster, "create_topic", topic="t", partitions=2, replication_factor=3)
    # c1's session outlasts the rebalance timeout (its max.poll.interval.ms): when it crashes and
    # c2 arrives, the join phase ends by the rebalance timeout, not by c1's session.
    apply(cluster, "consumer_join", member="c1", group="g", topics=["t"], poll_every_ms=100,
          config={"session.timeout.ms": 60_000, "max.poll.interval.ms": 20_000})
    apply(cluster, "consumer_crash", member="c1")
    consumer = cluster.consumer("c2", {"group.id": "g", "max.poll.interval.ms": 20_000})
    consumer.subscribe(["t"])
    PollLoop(consumer, poll_interval_ms=100).start()
    removed, seen = stepping(cluster, of_kind("member_removed", client_id="c1"))
    assert "did not rejoin" in removed.reason
    assert seen[("rebalance_timeout", "group g")][-1] == removed.time_ms
    assert seen[("member_session", "c1 in group g")][-1] > removed.time_ms   # announced, but later


def test_a_consumer_that_stops_polling_leaves_at_its_poll_timeout(tmp_path):
    cluster = Cluster(brokers=3, data_dir=str(tmp_path / "c"), seed=7)
    apply(cluster, "create_topic", topic="t", partitions=1, replication_factor=3)
    apply(cluster, "consumer_join", member="c1", group="g", topics=["t"], config={"max.poll.interval.ms": 20_000})
    cluster.run_for(1_000)
    assert pending_timers(cluster) == []           # it polled a moment ago
    left, seen = stepping(cluster, of_kind("consumer_left_group", consumer="c1"))
    assert "poll timeout" in left.reason
    assert seen[("poll_timeout", "c1")] == [left.time_ms]


def test_kraft_timers_say_when_the_controller_fences_a_dead_broker(tmp_path):
    from engine import events as ev
    from engine.cluster import Cluster
    from engine.timers import pending_timers
    cluster = Cluster(3, str(tmp_path), seed=1, metadata="kraft")
    victim = next(b for b in (1, 2, 3) if b != cluster.controller_id())    # not the active controller
    cluster.create_topic("t", 1, 3, replica_assignment=[[victim] + [b for b in (1, 2, 3) if b != victim]])
    cluster.kill_broker(victim)
    cluster.run_for(10)     # a heartbeat already on the wire still arrives, and renews the session
    timers = {t["kind"]: t for t in pending_timers(cluster)}
    fencing = timers["broker_fencing"]
    assert fencing["subject"] == f"broker-{victim}" and fencing["setting"] == "broker.session.timeout.ms"
    assert timers["leader_election"]["subject"] == "t-0" and timers["leader_election"]["due_ms"] == fencing["due_ms"]
    events = cluster.run_for(10_000)
    fenced = next(e for e in events if isinstance(e, ev.BrokerFenced))
    # The controller writes the fencing when the timer fires; the event comes when a majority has it.
    assert 0 <= fenced.time_ms - fencing["due_ms"] <= 10
    assert not [t for t in pending_timers(cluster) if t["kind"] == "broker_fencing"]
