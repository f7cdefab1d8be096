"""A lab session's host refuses a command whose arguments its step's schema refuses — before the
limits, the engine and the command log see it — and hands a step's warnings to the ack."""
from __future__ import annotations

from pathlib import Path

import pytest

from lab.host import HostError, SessionHost, Shape
from tests.lab.test_host import ListJournal

NAN, INF = float("nan"), float("inf")


@pytest.fixture
def host(tmp_path: Path):
    journal = ListJournal()
    host = SessionHost(str(tmp_path), Shape(3, 7, "leader-epoch", {"offsets.topic.num.partitions": 3}),
                       journal=journal)
    host.apply("create_topic", {"topic": "t", "partitions": 1, "replication_factor": 3})
    yield host
    host.close()


@pytest.mark.parametrize(("command", "args", "message"), [
    ("kill_broker", {"broker": NAN}, "kill_broker.broker must be a whole number from 1 to 9, not NaN"),
    ("kill_broker", {"broker": True}, "kill_broker.broker must be a whole number from 1 to 9, not true"),
    ("restart_broker", {"broker": INF}, "restart_broker.broker must be a whole number from 1 to 9, not Infinity"),
    ("produce", {"topic": "t", "values": "abc"}, "produce.values must be a list of 1 to 100000 strings (or null), "
                                                 "not a string"),
    ("consumer_poll", {"member": "c1", "timeout_ms": 1e13}, "consumer_poll.timeout_ms must be a whole number"),
    ("slow_broker", {"broker": 1, "delay_ms": -5}, "slow_broker.delay_ms must be a whole number from 0 to 60000, "
                                                   "not -5"),
    ("create_topic", {"topic": "u", "partitions": 10**6}, "create_topic.partitions must be a whole number from 1 "
                                                          "to 1000"),
    ("produce", {"topic": "t", "value": "x", "colour": "red"}, 'produce has no argument "colour"'),
    ("partition_network", {"a": 1, "b": NAN}, "partition_network.b must be a broker id"),
    ("create_topic", {"topic": "t", "config": {"retention.ms": NAN}}, "create_topic.config must be an object"),
])
def test_it_refuses_bad_arguments_before_the_engine_and_the_log(host: SessionHost, command: str, args: dict,
                                                                message: str) -> None:
    before, logged = host.snapshot(), list(host.log)

    with pytest.raises(HostError) as raised:
        host.apply(command, args)

    assert raised.value.message.startswith(message)
    assert raised.value.kafka_error == "INVALID_REQUEST"
    assert host.log == logged and len(host.journal.records) == len(logged)
    assert host.snapshot() == before


def test_a_refused_produce_takes_no_records_from_the_rate_limit(host: SessionHost) -> None:
    for _ in range(5):
        with pytest.raises(HostError):
            host.apply("produce", {"topic": "t", "values": ["a"] * 1999 + [5]})

    host.apply("produce", {"topic": "t", "values": ["m"] * host.limits.max_records_per_s})


@pytest.mark.parametrize(("command", "args", "kafka_error", "message"), [
    ("partition_network", {"a": 2, "b": "broker-2"}, "INVALID_REQUEST", "the link from broker-2 to itself"),
    ("heal_network", {"a": 1, "b": 1}, "INVALID_REQUEST", "the link from broker-1 to itself"),
    ("create_topic", {"topic": "__consumer_offsets"}, "INVALID_TOPIC_EXCEPTION", "the brokers create themselves"),
    ("produce", {"topic": "__consumer_offsets", "value": "x"}, "INVALID_TOPIC_EXCEPTION",
     "Cannot append to internal topic __consumer_offsets"),
])
def test_it_refuses_what_the_cluster_forbids_with_kafkas_error(host: SessionHost, command: str, args: dict,
                                                              kafka_error: str, message: str) -> None:
    before = host.snapshot()

    with pytest.raises(HostError) as raised:
        host.apply(command, args)

    assert message in raised.value.message and raised.value.kafka_error == kafka_error
    assert host.snapshot() == before
    assert len(host.timeline()["marks"]) == 1   # a failed command makes no mark


def test_a_second_consumer_under_a_running_ones_name_is_refused(host: SessionHost) -> None:
    host.apply("consumer_join", {"group": "g", "member": "c1", "topics": ["t"]})

    with pytest.raises(HostError) as raised:
        host.apply("consumer_join", {"group": "other", "member": "c1", "topics": ["t"]})

    assert "Consumer 'c1' is already running, in group 'g'" in raised.value.message


def test_warnings_come_back_with_the_command(host: SessionHost) -> None:
    result = host.apply("create_topic", {"topic": "orders.eu_1"})
    quiet = host.apply("produce", {"topic": "t", "value": "v"})

    assert len(result.warnings) == 1 and "topics with a period ('.') or underscore ('_') could collide" \
        in result.warnings[0]
    assert quiet.warnings == []


def test_what_is_logged_is_the_normalised_arguments(host: SessionHost) -> None:
    host.apply("produce", {"topic": "t", "values": ["a", "b"], "partition": 0.0})

    assert host.log[-1].args == {"topic": "t", "values": ["a", "b"], "partition": 0}
    assert type(host.log[-1].args["partition"]) is int


def test_a_queued_scenario_step_with_bad_arguments_stops_the_scenario_with_a_notice(host: SessionHost) -> None:
    host.load_scenario({"name": "oops", "cluster": {"brokers": 3}, "steps": [
        {"create_topic": {"topic": "t"}},
        {"slow_broker": {"broker": 1, "delay_ms": -1}, "expect_error": True},
        {"kill_broker": {"broker": 2}}]})

    for _ in range(3):   # each step plays one scenario step whole
        host.step()

    notices = host.take_notices()
    assert notices[0]["expected"] and "slow_broker.delay_ms must be a whole number" in notices[0]["message"]
    assert [r.command for r in host.log] == ["create_topic", "kill_broker"]


def test_a_scenario_with_bad_arguments_is_refused_whole(host: SessionHost) -> None:
    with pytest.raises(HostError, match=r"step 1 \(produce\): produce.values must be a list"):
        host.load_scenario({"steps": [{"create_topic": {"topic": "t"}}, {"produce": {"topic": "t", "values": "ab"}}]})
