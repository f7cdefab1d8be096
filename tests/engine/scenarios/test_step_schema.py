"""Every scenario step's arguments are checked against its declaration before it runs
(engine/scenarios/schema.py): a good call passes, and each kind of bad value is refused with a
message that names the step's field and says what is allowed."""
from __future__ import annotations

import pytest

from engine.scenarios.runner import STEPS
from engine.scenarios.schema import SCHEMAS, StepArgumentError, check_cluster, check_step

NAN, INF = float("nan"), float("inf")

# One good call of every step; a new step needs one here.
GOOD: dict[str, dict] = {
    "create_topic": {"topic": "orders.eu-1", "partitions": 3, "replication_factor": 2,
                     "config": {"cleanup.policy": "compact", "min.insync.replicas": 2, "retention.ms": 60000}},
    "produce": {"topic": "t", "values": ["a", None, "c"], "key": "k", "partition": 0, "acks": "all"},
    "kill_broker": {"broker": 2, "mode": "power"},
    "kill_controller": {"mode": "process"},
    "kill_controller_node": {"node": 101},
    "restart_controller_node": {"node": 103},
    "restart_broker": {"broker": 1},
    "pause_fetcher": {"broker": 3},
    "resume_fetcher": {"broker": 3},
    "partition_network": {"a": 1, "b": "producer-p1"},
    "heal_network": {"a": "broker-1", "b": 2},
    "slow_broker": {"broker": 1, "delay_ms": 200},
    "flush": {"broker": 9},
    "run": {"ms": 600_000},
    "step": {"count": 10},
    "run_until_idle": {"max_ms": 60_000},
    "run_until": {"event": "isr_shrunk", "match": {"partition": 0, "isr": [1, 2]}, "max_ms": 30_000},
    "consumer_join": {"group": "billing team", "member": "c1", "topics": ["orders", "payments"],
                      "assignor": "range,cooperative-sticky", "config": {"auto.offset.reset": "earliest"},
                      "timeout_ms": 60_000, "poll_every_ms": 10, "processing_ms": 500, "commit": "after",
                      "sink": "db", "sink_kind": "idempotent", "max_records": 100},
    "consumer_poll": {"member": "c1", "max_records": None, "timeout_ms": 0},
    "consumer_commit": {"member": "c1", "offsets": {"orders-0": 12, "__consumer_offsets-3": [4, 1]}},
    "consumer_crash": {"member": "c1"},
    "consumer_leave": {"member": "c1"},
    "add_partitions": {"topic": "t", "count": 4},
    "delete_topic": {"topic": "t"},
    "reassign_partitions": {"plan": {"version": 1, "partitions": [{"topic": "t", "partition": 0,
                                                                   "replicas": [3, 4, 5]}]}, "wait": True},
    "elect_leaders": {"election_type": "preferred", "topic": "t", "partition": 0},
}

# Bad values by kind of field (each must be refused whatever the field's range).
BAD_BY_KIND: dict[str, list] = {
    "whole": [NAN, INF, -INF, True, "1", 1.5, [1], {"n": 1}],
    "flag": [NAN, 1, "true"],
    "text": [NAN, 5, True, ["a"]],
    "topic": [NAN, 5, "", "bad name!", ".", "..", "x" * 250, ["t"]],
    "choice": [NAN, INF, "no-such-value", ["all"]],
    "list": [NAN, "abc", 5, {"a": 1}, []],
    "config": [NAN, "acks=all", ["acks"], {"acks": NAN}, {"retries": INF}, {"acks": ["all"]},
               {"bad key!": 1}, {"nested": {"a": 1}}],
    "match": [NAN, "broker=1", {"broker": NAN}, {"broker": {"id": 1}}],
    "offsets": [NAN, "t-0:5", {"t": 5}, {"t-0": -5}, {"t-0": NAN}, {"t-0": True}],
    "node": [NAN, 0, 10, True, "bad name!", ["broker-1"]],
    "regex": [NAN, 5, "(unclosed"],
    "assignors": [NAN, 5, "fastest", "range,fastest"],
    "plan": [NAN, "{}", [1], {"version": 1}, {"partitions": 5}, {"partitions": [{"replicas": [NAN]}]},
             {"partitions": [{}] * 1001}],
}


def _shown(value: object) -> str:
    return repr(value)[:40]


def _bad_cases() -> list:
    cases = []
    for command, schema in SCHEMAS.items():
        for field in schema.fields:
            bad = list(BAD_BY_KIND[field.kind])
            if field.kind == "whole":
                bad += [field.low - 1, field.high + 1]
            if field.kind == "text":
                bad.append("x" * (field.max_length + 1))
            for value in bad:
                cases.append(pytest.param(command, field.name, value, id=f"{command}.{field.name}={_shown(value)}"))
    return cases


def test_every_step_has_a_schema_and_a_good_call_here() -> None:
    assert set(SCHEMAS) == set(STEPS) == set(GOOD)


@pytest.mark.parametrize("command", sorted(GOOD))
def test_a_good_call_passes_unchanged(command: str) -> None:
    assert check_step(command, GOOD[command]) == GOOD[command]


@pytest.mark.parametrize(("command", "field", "value"), _bad_cases())
def test_each_kind_of_bad_value_is_refused_naming_the_field(command: str, field: str, value: object) -> None:
    args = {**_good_without_rivals(command, field), field: value}

    with pytest.raises(StepArgumentError) as raised:
        check_step(command, args)

    assert raised.value.field == field
    assert str(raised.value).startswith(f"{command}.{field} must be ")


def _good_without_rivals(command: str, field: str) -> dict:
    """The good call, without the fields `field` may not come with (value/values, broker/leader_of…)."""
    args = dict(GOOD.get(command, {}))
    for group in SCHEMAS[command].one_of:
        if field in group:
            for other in group:
                args.pop(other, None)
    for a, b, _ in SCHEMAS[command].exclusive:
        if field in (a, b):
            args.pop(b if field == a else a, None)
    return args


@pytest.mark.parametrize("command", sorted(GOOD))
def test_an_unknown_argument_is_refused_naming_the_known_ones(command: str) -> None:
    with pytest.raises(StepArgumentError) as raised:
        check_step(command, {**GOOD[command], "colour": "blue"})

    known = ", ".join(f.name for f in SCHEMAS[command].fields)
    assert str(raised.value) == f'{command} has no argument "colour" (its arguments: {known})'
    assert raised.value.field == "colour"


@pytest.mark.parametrize("command", sorted(c for c, s in SCHEMAS.items() if any(f.required for f in s.fields)))
def test_a_missing_required_argument_is_named(command: str) -> None:
    required = next(f.name for f in SCHEMAS[command].fields if f.required)
    args = {k: v for k, v in GOOD[command].items() if k != required}

    with pytest.raises(StepArgumentError, match=rf"^{command}\.{required} is required: "):
        check_step(command, args)


@pytest.mark.parametrize(("command", "args", "message"), [
    ("produce", {"topic": "t", "values": "abc"},
     "produce.values must be a list of 1 to 100000 strings (or null), not a string"),
    ("slow_broker", {"broker": 1, "delay_ms": -5},
     "slow_broker.delay_ms must be a whole number from 0 to 60000, not -5"),
    ("kill_broker", {"broker": NAN}, "kill_broker.broker must be a whole number from 1 to 9, not NaN"),
    ("kill_broker", {"broker": True}, "kill_broker.broker must be a whole number from 1 to 9, not true"),
    ("consumer_poll", {"member": "c1", "timeout_ms": 1e13},
     "consumer_poll.timeout_ms must be a whole number from 0 to 600000, not 10000000000000"),
    ("run", {"ms": INF}, "run.ms must be a whole number from 0 to 600000, not Infinity"),
    ("consumer_join", {"group": "g", "member": "c1", "topics": ["t"], "poll_every_ms": 1},
     "consumer_join.poll_every_ms must be a whole number from 10 to 600000, not 1"),
    ("produce", {"topic": "t", "values": ["a", 5]},
     "produce.values must be a list of 1 to 100000 strings (or null): item 1 is 5"),
    ("create_topic", {"topic": "a b"}, "create_topic.topic must be a topic name: 1 to 249 ASCII letters, "
                                       "digits, '.', '_' or '-' (not \".\" or \"..\"), not \"a b\""),
    ("consumer_join", {"group": "g", "member": "c1", "topics": ["t"], "config": {"retries": NAN}},
     "consumer_join.config must be an object of at most 200 Kafka settings, like {\"acks\": \"all\"}: "
     "retries is NaN; a setting is a string (at most 10000 characters), a finite number, true/false or null"),
])
def test_the_message_says_what_is_wrong_and_what_is_allowed(command: str, args: dict, message: str) -> None:
    with pytest.raises(StepArgumentError) as raised:
        check_step(command, args)

    assert str(raised.value) == message


def test_a_topic_name_error_carries_kafkas_error_name() -> None:
    with pytest.raises(StepArgumentError) as raised:
        check_step("create_topic", {"topic": "bad name!"})

    assert raised.value.kafka_name == "INVALID_TOPIC_EXCEPTION"


@pytest.mark.parametrize(("command", "args", "message"), [
    ("produce", {"topic": "t", "value": "a", "values": ["b"]}, "produce takes value or values, not both"),
    ("produce", {"topic": "t", "producer": "p", "acks": 1}, "acks is a producer setting: put it in config"),
    ("produce", {"topic": "t", "config": {"acks": "all"}}, "produce.config needs producer"),
    ("kill_broker", {}, "kill_broker needs exactly one of broker, leader_of, controller (none was given)"),
    ("kill_broker", {"broker": 1, "leader_of": "t-0"}, "not broker and leader_of together"),
    ("consumer_join", {"group": "g", "member": "c1"}, "needs exactly one of topics, pattern"),
    ("consumer_join", {"group": "g", "member": "c1", "topics": ["t"], "commit": "after"},
     "consumer_join.commit needs poll_every_ms"),
    ("run_until", {"event": "isr_shrunk", "match": {"colour": "red"}}, "match names field(s) colour"),
])
def test_rules_between_fields_are_said(command: str, args: dict, message: str) -> None:
    with pytest.raises(StepArgumentError, match=message.replace("(", r"\(").replace(")", r"\)")):
        check_step(command, args)


def test_a_whole_valued_float_is_taken_as_the_whole_number() -> None:
    assert check_step("step", {"count": 5.0}) == {"count": 5}
    assert isinstance(check_step("run", {"ms": 1e3})["ms"], int)


def test_null_arguments_and_no_arguments_are_an_empty_call() -> None:
    assert check_step("kill_controller", None) == {}
    assert check_step("run_until_idle", {}) == {}


@pytest.mark.parametrize("command", ["fly", None, 5])
def test_an_unknown_command_is_refused_naming_the_known_ones(command: object) -> None:
    with pytest.raises(StepArgumentError, match="known: add_partitions, consumer_commit"):
        check_step(command, {})


def test_arguments_must_be_an_object() -> None:
    with pytest.raises(StepArgumentError, match="The arguments of produce must be an object, not a list"):
        check_step("produce", ["t", "v"])


@pytest.mark.parametrize(("cluster", "message"), [
    ({"brokers": 12}, "cluster.brokers must be a whole number from 1 to 9, not 12"),
    ({"brokers": True}, "cluster.brokers must be a whole number from 1 to 9, not true"),
    ({"config": {"min.insync.replicas": NAN}}, "cluster.config must be an object"),
    ({"truncation": "sometimes"}, "cluster.truncation must be one of"),
])
def test_a_scenarios_cluster_follows_the_same_rules(cluster: dict, message: str) -> None:
    with pytest.raises(StepArgumentError, match=message.replace("(", r"\(")):
        check_cluster(cluster)


def test_every_field_kind_has_bad_values_here() -> None:
    kinds = {f.kind for s in SCHEMAS.values() for f in s.fields}
    assert kinds <= set(BAD_BY_KIND), kinds - set(BAD_BY_KIND)
