"""The KRaft scenarios: the controller failover beside ZooKeeper mode's, and a fenced broker."""
from __future__ import annotations

from engine.scenarios import load_scenario, run_scenario


def run(name, tmp_path):
    events = []
    cluster, result = run_scenario(load_scenario(name), str(tmp_path / name), trace=events.append)
    cluster.close()
    return result, events


def first(events, kind, **match):
    return next(e for e in events if e.kind == kind and all(getattr(e, k) == v for k, v in match.items()))


def test_controller_failover_takes_seconds_in_kraft_and_a_session_timeout_in_zookeeper(tmp_path):
    zk_result, zk_events = run("controller-failover", tmp_path)
    kraft_result, kraft_events = run("controller-failover-kraft", tmp_path)
    zk_crash = first(zk_events, "broker_crashed", broker=1)
    zk_elected = first(zk_events, "controller_elected", broker=2)
    assert zk_elected.time_ms - zk_crash.time_ms >= 18_000            # zookeeper.session.timeout.ms
    crash = first(kraft_events, "broker_crashed", broker=1)
    activated = next(e for e in kraft_events if e.kind == "quorum_controller_activated" and e.time_ms > crash.time_ms)
    assert activated.node in (2, 3) and activated.epoch > 1
    assert 2_000 <= activated.time_ms - crash.time_ms < 10_000         # fetch timeout, then a vote
    fenced = first(kraft_events, "broker_fenced", broker=1)
    assert 0 < fenced.time_ms - activated.time_ms <= 9_010   # a fresh session from activation, 9 s
    # Same broker-side outcome in both modes: leaders kept, broker 1 back in both ISRs, every write kept.
    for result in (zk_result, kraft_result):
        parts = {p["partition"]: p for p in result["partitions"] if p["topic"] == "t"}
        assert (parts[0]["leader"], parts[1]["leader"]) == (2, 3)
        assert sorted(parts[0]["isr"]) == sorted(parts[1]["isr"]) == [1, 2, 3]
        assert all(r["acked"] for r in result["produced"])
    # ZooKeeper mode bumps the leader epoch when the controller shrinks an ISR; KRaft does not.
    kraft_parts = [p for p in kraft_result["partitions"] if p["topic"] == "t"]
    zk_parts = [p for p in zk_result["partitions"] if p["topic"] == "t"]
    assert all(p["leader_epoch"] == 0 for p in kraft_parts) and all(p["leader_epoch"] >= 1 for p in zk_parts)
    # KRaft: no LeaderAndIsr at all; brokers fetched the metadata log.
    assert not any(e.kind == "message_sent" and e.api == "LeaderAndIsr" for e in kraft_events)
    assert any(e.kind == "message_sent" and e.api == "AlterPartition" for e in kraft_events)


def test_a_broker_cut_off_from_the_controller_is_fenced_while_it_runs(tmp_path):
    result, events = run("broker-fencing-kraft", tmp_path)
    cut = first(events, "fault_injected", fault="partition_network")
    fenced = first(events, "broker_fenced", broker=3)
    assert fenced.time_ms - cut.time_ms <= 9_010
    moved = first(events, "leader_elected", previous_leader=3)
    assert moved.leader == 1 and moved.time_ms == fenced.time_ms and 3 not in moved.isr
    first(events, "broker_unfenced", broker=3)
    part = next(p for p in result["partitions"] if p["topic"] == "t")
    assert part["leader"] == 1 and sorted(part["isr"]) == [1, 2, 3]
    records = [r["value"] for r in part["replica_states"]["3"]["records"]]
    assert records == ["m1", "m2", "m3"] and all(r["acked"] for r in result["produced"])
