"""A scenario file is checked whole before it runs (the step, the command and the field named),
and the steps check what needs the cluster, with Kafka's error names — or warn, where Kafka
accepts what a learner rarely means."""
from __future__ import annotations

import glob
import json
from pathlib import Path

import pytest

from engine.cluster import Cluster, ClusterError
from engine.scenarios.runner import ScenarioError, load_scenario, run_scenario, run_step
from engine.scenarios.schema import check_step

REPO = Path(__file__).resolve().parents[3]
FAST_GROUPS = {"offsets.topic.num.partitions": 3}


@pytest.fixture
def cluster(tmp_path: Path):
    c = Cluster(brokers=3, data_dir=str(tmp_path / "c"), seed=5, config=FAST_GROUPS)
    run_step(c, "create_topic", check_step("create_topic", {"topic": "t", "partitions": 2, "replication_factor": 3}), 0)
    yield c
    c.close()


def step(c: Cluster, command: str, **args: object) -> list[str]:
    return run_step(c, command, check_step(command, args), 1)


# -- scenario files ---------------------------------------------------------------------------
@pytest.mark.parametrize("path", sorted(glob.glob(str(REPO / "engine/scenarios/builtin/*.json")))
                         + sorted(glob.glob(str(REPO / "spark_exercises/exercises/*/scenario.json"))),
                         ids=lambda p: Path(p).parent.name + "/" + Path(p).stem)
def test_every_built_in_and_exercise_scenario_is_valid(path: str) -> None:
    assert load_scenario(path)["steps"]


def test_a_broken_scenario_file_is_refused_naming_the_step_the_command_and_the_field(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"cluster": {"brokers": 3}, "steps": ['
                    '{"create_topic": {"topic": "t"}},'
                    '{"run": {"ms": 1000}},'
                    '{"produce": {"topic": "t", "values": "hello"}}]}')

    with pytest.raises(ScenarioError) as raised:
        load_scenario(str(path))

    assert str(raised.value) == ("step 2 (produce): produce.values must be a list of 1 to 100000 strings "
                                 "(or null), not a string")


def test_nan_in_a_scenario_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "nan.json"
    path.write_text('{"steps": [{"create_topic": {"topic": "t"}}, {"slow_broker": {"broker": 1, "delay_ms": NaN}}]}')

    with pytest.raises(ScenarioError, match=r"^step 1 \(slow_broker\): slow_broker.delay_ms must be a whole "
                                            r"number from 0 to 60000, not NaN$"):
        load_scenario(str(path))


def test_a_step_expected_to_fail_has_its_arguments_checked_when_it_runs(tmp_path: Path) -> None:
    scenario = {"cluster": {"brokers": 1}, "steps": [
        {"create_topic": {"topic": "bad name!"}, "expect_error": True},
        {"kill_broker": {"broker": "one"}, "expect_error": True},
        {"create_topic": {"topic": "t"}}]}

    cluster, result = run_scenario(scenario, str(tmp_path / "run"))
    cluster.close()

    assert [(e["step"], e["kafka_error"]) for e in result["step_errors"]] == [
        (0, "INVALID_TOPIC_EXCEPTION"), (1, "INVALID_REQUEST")]
    assert "kill_broker.broker must be a whole number" in result["step_errors"][1]["error"]


# -- checks that need the cluster -------------------------------------------------------------
@pytest.mark.parametrize("command", ["partition_network", "heal_network"])
@pytest.mark.parametrize(("a", "b"), [(1, 1), (1, "broker-1"), ("2", 2), ("client", "client")])
def test_a_link_from_a_node_to_itself_is_refused(cluster: Cluster, command: str, a: object, b: object) -> None:
    with pytest.raises(ClusterError, match="to itself: a link joins two different nodes") as raised:
        step(cluster, command, a=a, b=b)

    assert raised.value.kafka_name == "INVALID_REQUEST"
    assert cluster.network.cut_links() == []


def test_a_negative_slowdown_is_refused_even_past_the_schema(cluster: Cluster) -> None:
    # A command log written before arguments were checked replays without check_step.
    with pytest.raises(ClusterError, match="0 ms or more, not -5 ms") as raised:
        run_step(cluster, "slow_broker", {"broker": 1, "delay_ms": -5}, 1)

    assert raised.value.kafka_name == "INVALID_REQUEST"


@pytest.mark.parametrize("topic", ["__consumer_offsets", "__transaction_state", "__mine"])
def test_creating_an_internal_topic_is_refused(cluster: Cluster, topic: str) -> None:
    with pytest.raises(ClusterError, match="the brokers create themselves") as raised:
        step(cluster, "create_topic", topic=topic)

    assert raised.value.kafka_name == "INVALID_TOPIC_EXCEPTION"
    assert topic not in cluster.topics


def test_producing_to_an_internal_topic_is_refused_as_a_broker_would(cluster: Cluster) -> None:
    step(cluster, "consumer_join", group="g", member="c1", topics=["t"])
    assert "__consumer_offsets" in cluster.topics

    with pytest.raises(ClusterError, match="^Cannot append to internal topic __consumer_offsets") as raised:
        step(cluster, "produce", topic="__consumer_offsets", value="forged")

    assert raised.value.kafka_name == "INVALID_TOPIC_EXCEPTION"
    assert cluster.produced == []


def test_a_running_consumers_name_is_refused_saying_its_group_and_how_to_free_it(cluster: Cluster) -> None:
    step(cluster, "consumer_join", group="billing", member="c1", topics=["t"])

    with pytest.raises(ClusterError) as raised:
        step(cluster, "consumer_join", group="audit", member="c1", topics=["t"])

    assert raised.value.kafka_name == "INVALID_REQUEST"
    assert "Consumer 'c1' is already running, in group 'billing'" in str(raised.value)
    assert "consumer_leave (or consumer_crash) for 'c1'" in str(raised.value)
    assert cluster.consumers["c1"].group_id == "billing"


@pytest.mark.parametrize("end", ["consumer_leave", "consumer_crash"])
def test_a_name_freed_by_leave_or_crash_starts_a_new_consumer(cluster: Cluster, end: str) -> None:
    step(cluster, "consumer_join", group="g", member="c1", topics=["t"])
    old = cluster.consumers["c1"]
    step(cluster, end, member="c1")

    step(cluster, "consumer_join", group="g", member="c1", topics=["t"], timeout_ms=60_000)

    new = cluster.consumers["c1"]
    assert new is not old and new.alive and new.is_stable()
    assert new.client.incarnation != old.client.incarnation  # old answers in flight are not the new one's


def test_joining_topics_that_do_not_exist_is_accepted_with_a_warning(cluster: Cluster) -> None:
    warnings = step(cluster, "consumer_join", group="g", member="c1", topics=["t", "later"])

    assert warnings == ["Topic 'later' does not exist: consumer 'c1' joins group 'g' anyway (as Kafka allows) "
                        "and gets no partitions of it until it is created"]
    assert cluster.consumers["c1"].is_stable()
    assert {tp.topic for tp in cluster.consumers["c1"].assignment()} == {"t"}


def test_a_pattern_matching_no_topic_yet_warns(cluster: Cluster) -> None:
    warnings = step(cluster, "consumer_join", group="g", member="c1", pattern="orders-.*")

    assert warnings and "No topic matches the pattern 'orders-.*' yet" in warnings[0]


def test_warnings_land_in_the_runners_result(tmp_path: Path) -> None:
    scenario = {"cluster": {"brokers": 1, "config": FAST_GROUPS}, "steps": [
        {"create_topic": {"topic": "orders.eu_1"}},
        {"consumer_join": {"group": "g", "member": "c1", "topics": ["missing"]}}]}

    cluster, result = run_scenario(scenario, str(tmp_path / "run"))
    cluster.close()

    assert [(w["step"], w["command"]) for w in result["step_warnings"]] == [(0, "create_topic"), (1, "consumer_join")]
    assert "could collide" in result["step_warnings"][0]["warning"]
    assert json.dumps(result)  # still plain JSON
