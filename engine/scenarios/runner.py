"""Runs a scenario against a fresh cluster and reports the final state.

Each step is a one-key object `{"<command>": {arguments}}`. Every step's arguments are checked
against its declaration (schema.py) before anything runs, so a scenario file with a wrong
argument is refused whole, naming the step, the command and the field. A step that fails as a
whole (a bad topic name, a replication factor larger than the live brokers) stops the run with a
ScenarioError naming the step — unless the step says `"expect_error": true`, in which case the
error is recorded and the run goes on (such a step's arguments are checked when it runs: a bad
argument may be the error it expects). Produce answers (acks, errors) are not step failures:
they are what the scenario is about, and they land in the result's "produced" list.

A step function checks what needs the cluster (a link from a node to itself, a consumer name in
use, an internal topic) and raises ClusterError with Kafka's error name. What Kafka accepts but a
learner may not mean (subscribing to a topic that does not exist yet) it returns as warnings: a
list of sentences, which `run_step` hands on (the lab puts them in the command's `ack`, the
runner in the result's "step_warnings").
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

from engine import events as ev
from engine.cluster import Cluster, ClusterError
from engine.common.errors import Errors, KafkaError
from engine.common.topics import collision_warning
from engine.config import split_config
from engine.inspect.cluster import cluster_state
from engine.scenarios.schema import StepArgumentError, check_cluster, check_step, is_internal_topic
from engine.storage.errors import InvalidConfigError
from engine.topic_pattern import TopicPattern

Warnings = list[str]
Step = Callable[[Cluster, dict, int], "Warnings | None"]

BUILTIN_DIR = os.path.join(os.path.dirname(__file__), "builtin")


class ScenarioError(Exception):
    """The scenario itself is wrong, or one of its steps failed."""


def builtin_names() -> list[str]:
    return sorted(name[:-5] for name in os.listdir(BUILTIN_DIR) if name.endswith(".json"))


def load_scenario(name_or_path: str) -> dict:
    """A built-in scenario by name, or a JSON file by path."""
    path = name_or_path
    if not os.path.exists(path):
        candidate = os.path.join(BUILTIN_DIR, f"{name_or_path}.json")
        if not os.path.exists(candidate):
            raise ScenarioError(f"No scenario file {name_or_path!r} and no built-in scenario of that name "
                                f"(built-ins: {', '.join(builtin_names())})")
        path = candidate
    try:
        with open(path, encoding="utf-8") as f:
            scenario = json.load(f)
    except json.JSONDecodeError as error:
        raise ScenarioError(f"{path}: not valid JSON ({error})") from None
    validate(scenario)
    return scenario


def validate(scenario: Any) -> None:
    if not isinstance(scenario, dict):
        raise ScenarioError("A scenario is a JSON object")
    if not isinstance(scenario.get("steps"), list):
        raise ScenarioError("A scenario needs a 'steps' list")
    cluster = scenario.get("cluster", {})
    if not isinstance(cluster, dict):
        raise ScenarioError("'cluster' must be an object")
    unknown = set(cluster) - {"brokers", "seed", "config", "truncation", "metadata"}
    if unknown:
        raise ScenarioError(f"Unknown cluster field(s): {', '.join(sorted(unknown))}")
    _validate_cluster(cluster)
    for index, step in enumerate(scenario["steps"]):
        command, args = _split_step(index, step)
        if command not in STEPS:
            raise ScenarioError(f"step {index}: unknown command {command!r} (known: {', '.join(sorted(STEPS))})")
        if not step.get("expect_error"):
            try:
                check_step(command, args)
            except StepArgumentError as error:
                raise ScenarioError(f"step {index} ({command}): {error}") from None


def _validate_cluster(cluster: dict) -> None:
    """The shape's fields (schema.check_cluster) and its settings' bounds (engine.common.config_values:
    Kafka's minimums, no 0 ms timer), before a cluster is built from it."""
    try:
        checked = check_cluster(cluster)
        truncation = {"truncation": checked["truncation"]} if checked.get("truncation") else {}
        metadata = {"metadata": checked["metadata"]} if checked.get("metadata") else {}
        split_config({**(checked.get("config") or {}), **truncation, **metadata}, brokers=checked.get("brokers", 3))
    except (StepArgumentError, InvalidConfigError) as error:
        raise ScenarioError(f"cluster: {error}" if isinstance(error, InvalidConfigError) else str(error)) from None


# A step's keys besides its one command: whether it is expected to fail, and its note for the
# learner (`note` in English, `note_zh` in Chinese: the page shows the one of its language).
STEP_META_KEYS = ("expect_error", "note", "note_zh")
MAX_NOTE_CHARS = 1_000


def step_command(step: dict) -> str:
    """The command of a (valid) step: its one key that is not a STEP_META_KEYS key."""
    return next(k for k in step if k not in STEP_META_KEYS)


def _split_step(index: int, step: Any) -> tuple[str, dict]:
    if not isinstance(step, dict):
        raise ScenarioError(f"step {index}: a step is an object like {{\"run\": {{\"ms\": 1000}}}}")
    for key in ("note", "note_zh"):
        if key in step and not (isinstance(step[key], str) and len(step[key]) <= MAX_NOTE_CHARS):
            raise ScenarioError(f"step {index}: '{key}' must be a text of at most {MAX_NOTE_CHARS} characters")
    commands = [k for k in step if k not in STEP_META_KEYS]
    if len(commands) != 1:
        raise ScenarioError(f"step {index}: needs exactly one command, found {commands or 'none'}")
    args = step[commands[0]]
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ScenarioError(f"step {index} ({commands[0]}): arguments must be an object")
    return commands[0], args


# What a step may fail with (its error, not a bug): the runner stops, or goes on if expected.
# KafkaError covers ClusterError, InvalidConfigError and ProducerError (a producer step's send after a crash).
STEP_ERRORS = (KafkaError, ValueError, KeyError, TypeError)


def scenario_cluster(scenario: dict, data_dir: str, *, trace: Callable[[ev.Event], None] | None = None,
                     cluster_factory: Callable[..., Cluster] = Cluster) -> Cluster:
    """A new cluster of the scenario's shape in `data_dir`, none of its steps played."""
    shape = scenario.get("cluster", {})
    return cluster_factory(brokers=int(shape.get("brokers", 3)), data_dir=data_dir,
                           seed=int(shape.get("seed", 0)), config=shape.get("config") or {},
                           truncation=shape.get("truncation"), on_event=trace, metadata=shape.get("metadata"))


def run_scenario(scenario: dict, data_dir: str, *, trace: Callable[[ev.Event], None] | None = None,
                 cluster_factory: Callable[..., Cluster] = Cluster) -> tuple[Cluster, dict]:
    """Play `scenario` into a new cluster in `data_dir`; returns the cluster and the result dict."""
    validate(scenario)
    cluster = scenario_cluster(scenario, data_dir, trace=trace, cluster_factory=cluster_factory)
    errors, warnings = [], []
    for index, step in enumerate(scenario["steps"]):
        command, args = _split_step(index, step)
        try:
            said = run_step(cluster, command, check_step(command, args), index)
        except STEP_ERRORS as error:
            message = f"step {index} ({command}) failed: {_describe(error)}"
            if not step.get("expect_error"):
                raise ScenarioError(message) from error
            errors.append({"step": index, "command": command, "error": _describe(error),
                           "kafka_error": getattr(error, "kafka_name", None)})
        else:
            if step.get("expect_error"):
                raise ScenarioError(f"step {index} ({command}) was expected to fail but succeeded")
            warnings += [{"step": index, "command": command, "warning": text} for text in said]
    result = cluster_state(cluster)
    result["name"] = scenario.get("name", "")
    result["step_errors"] = errors
    result["step_warnings"] = warnings
    return cluster, result


def run_step(cluster: Cluster, command: str, args: dict, tag: int) -> Warnings:
    """Apply one step (its arguments already checked by check_step); returns its warnings."""
    return list(STEPS[command](cluster, args, tag) or [])


def _describe(error: Exception) -> str:
    text = str(error) or type(error).__name__
    if isinstance(error, KeyError):
        text = f"missing argument {text}"
    return text


# -- the steps -----------------------------------------------------------------------------
# Each takes (cluster, checked arguments, step number) and returns its warnings, or None.
def _create_topic(c: Cluster, a: dict, i: int) -> Warnings:
    topic = a["topic"]
    if is_internal_topic(topic):
        raise ClusterError(f"Topic name '{topic}' is reserved: names starting with '__' are Kafka's internal "
                           f"topics (__consumer_offsets, __transaction_state), which the brokers create "
                           f"themselves when they first need them", Errors.INVALID_TOPIC_EXCEPTION)
    c.create_topic(topic, a.get("partitions", 1), a.get("replication_factor", 1),
                   config=a.get("config"), replica_assignment=a.get("replica_assignment"))
    warning = collision_warning(topic)
    return [warning] if warning else []


def _produce(c: Cluster, a: dict, i: int) -> None:
    """Without "producer": one request per record (Cluster.produce). With "producer": the named
    Producer (created with "config" on first use) takes the records; they wait for linger.ms
    like Kafka's, unless "flush": true runs the cluster until every record is answered."""
    if is_internal_topic(a["topic"]):
        # What a broker answers a client that appends to __consumer_offsets (ReplicaManager).
        raise ClusterError(f"Cannot append to internal topic {a['topic']}: only the brokers write it "
                           f"(the group coordinator, for committed offsets)", Errors.INVALID_TOPIC_EXCEPTION)
    values = a["values"] if a.get("values") is not None else [a.get("value")]
    if not a.get("producer"):
        for value in values:
            c.produce(a["topic"], a.get("key"), value, partition=a.get("partition"), acks=a.get("acks", -1), tag=i)
        return
    name = a["producer"]
    if a.get("config") is not None and name in c.producers and c.producers[name].given_config != a["config"]:
        raise ValueError(f"producer {name!r} already exists with another config")
    producer = c.producer(name, a.get("config"))
    for value in values:
        producer.send(a["topic"], a.get("key"), value, partition=a.get("partition"), tag=i)
    if a.get("flush"):
        producer.flush()


def _broker_arg(c: Cluster, a: dict) -> int:
    if a.get("leader_of"):
        topic, _, partition = a["leader_of"].rpartition("-")
        leader = c.leader_of(topic, int(partition))
        if leader < 0:
            raise ClusterError(f"{a['leader_of']} has no leader", Errors.LEADER_NOT_AVAILABLE)
        return leader
    if a.get("controller"):
        return c.controller_id()
    return a["broker"]


def _kill_broker(c: Cluster, a: dict, i: int) -> None:
    c.kill_broker(_broker_arg(c, a), a.get("mode", "process"))


def _kill_controller(c: Cluster, a: dict, i: int) -> None:
    c.kill_controller(a.get("mode", "process"))


def _kill_controller_node(c: Cluster, a: dict, i: int) -> None:
    c.kill_controller_node(a["node"])


def _restart_controller_node(c: Cluster, a: dict, i: int) -> None:
    c.restart_controller_node(a["node"])


def _restart_broker(c: Cluster, a: dict, i: int) -> None:
    c.restart_broker(a["broker"])


def _pause_fetcher(c: Cluster, a: dict, i: int) -> None:
    c.pause_fetcher(a["broker"])


def _resume_fetcher(c: Cluster, a: dict, i: int) -> None:
    c.resume_fetcher(a["broker"])


def _link(c: Cluster, a: dict, what: str) -> tuple[int | str, int | str]:
    """The two ends of a link; a node and itself have no link between them."""
    ends = a["a"], a["b"]
    names = [_node_name(c, end) for end in ends]
    if names[0] == names[1]:
        raise ClusterError(f"Cannot {what} the link from {names[0]} to itself: a link joins two different "
                           f"nodes (a broker and another broker or a client)", Errors.INVALID_REQUEST)
    return ends


def _node_name(c: Cluster, node: int | str) -> str:
    """A node as the network names it: broker ids (1, "1") are "broker-1"."""
    if isinstance(node, int) or node.isdigit():
        return f"broker-{int(node)}"
    return node


def _partition_network(c: Cluster, a: dict, i: int) -> None:
    c.partition_network(*_link(c, a, "cut"))


def _heal_network(c: Cluster, a: dict, i: int) -> None:
    c.heal_network(*_link(c, a, "heal"))


def _slow_broker(c: Cluster, a: dict, i: int) -> None:
    delay_ms = a.get("delay_ms", 0)
    if delay_ms < 0:   # a log written before the arguments were checked
        raise ClusterError(f"A broker can be slowed by 0 ms or more, not {delay_ms} ms", Errors.INVALID_REQUEST)
    c.slow_broker(a["broker"], delay_ms)


def _flush(c: Cluster, a: dict, i: int) -> None:
    c.flush_broker(a["broker"])


def _add_partitions(c: Cluster, a: dict, i: int) -> None:
    c.add_partitions(a["topic"], a["count"])


def _delete_topic(c: Cluster, a: dict, i: int) -> Warnings:
    status = c.delete_topic(a["topic"])
    if status["deleted"]:
        return []
    return [f"Topic {a['topic']} is marked for deletion; its deletion waits for broker(s) "
            f"{', '.join(map(str, status['waiting_for_brokers']))} to come back"]


def _reassign_partitions(c: Cluster, a: dict, i: int) -> None:
    c.reassign_partitions(a["plan"], wait=bool(a.get("wait")))


def _elect_leaders(c: Cluster, a: dict, i: int) -> Warnings:
    partitions = None if a.get("all_topic_partitions") else [(a["topic"], a["partition"])]
    results = c.elect_leaders(a.get("election_type", "preferred"), partitions)
    return [f"{tp}: {error}" for tp, error in results.items() if error != Errors.NONE]


# -- the clock ------------------------------------------------------------------------------
def _run(c: Cluster, a: dict, i: int) -> None:
    c.run_for(a["ms"])


def _step(c: Cluster, a: dict, i: int) -> None:
    for _ in range(a.get("count", 1)):
        c.step()


def _run_until_idle(c: Cluster, a: dict, i: int) -> None:
    c.run_until_idle(a.get("max_ms", 600_000))


def _run_until(c: Cluster, a: dict, i: int) -> None:
    """Step until an event of `event` kind whose fields match `match` has happened."""
    kind, match = a["event"], a.get("match") or {}
    if kind not in ev.EVENT_TYPES:
        raise ValueError(f"unknown event kind {kind!r}")
    seen = []
    unsubscribe = c.subscribe(lambda e: seen.append(e) if e.kind == kind and all(
        getattr(e, k, None) == v for k, v in match.items()) else None)
    try:
        max_ms = a.get("max_ms", 600_000)
        c.bus.drain()   # as Cluster.step does: the bus keeps no events of this step's actions
        found = c.scheduler.run(c.now_ms + max_ms, stop=lambda: bool(seen), advance=False)
        c.bus.drain()
        if not found:
            raise ClusterError(f"no {kind} event matching {match} within {max_ms} ms")
    finally:
        unsubscribe()


# -- consumer groups -----------------------------------------------------------------------
def _client_step(step: Step) -> Step:
    """A consumer's error (CommitFailedError, ...) fails the step like a cluster error does."""
    def run(c: Cluster, a: dict, i: int) -> Warnings | None:
        from engine.clients.consumer_state import KafkaClientError
        try:
            return step(c, a, i)
        except KafkaClientError as error:
            raise ClusterError(str(error), error.kafka_name) from error
    return run


def _run_while(c: Cluster, waiting: Callable[[], bool], max_ms: int) -> None:
    """Run while `waiting()`, for at most max_ms; the clock ends at the deadline if it comes first."""
    c.scheduler.run(c.now_ms + max_ms, stop=lambda: not waiting())


def _consumer(c: Cluster, a: dict):
    if a["member"] not in c.consumers:
        raise ClusterError(f"There is no consumer {a['member']!r} (consumers: {sorted(c.consumers)})",
                           Errors.INVALID_REQUEST)
    return c.consumers[a["member"]]


def _claim_member_name(c: Cluster, name: str):
    """A member name is one consumer at a time. A live one keeps it; one that left or crashed
    gives it up, and the next join under that name starts a new consumer (a new process with
    the same client.id, as Kafka allows). Returns the consumer that gave the name up, if any."""
    old = c.consumers.get(name)
    if old is None:
        return None
    if old.alive and not old.closed:
        raise ClusterError(f"Consumer {name!r} is already running, in group {old.group_id!r}. To join again under "
                           f"that name, first send consumer_leave (or consumer_crash) for {name!r}; or choose "
                           f"another member name", Errors.INVALID_REQUEST)
    del c.consumers[name]
    return old


def _join_warnings(c: Cluster, a: dict) -> Warnings:
    """Kafka lets a consumer subscribe to topics that do not exist: it gets no partitions of them
    until they are created. Say so, as a learner rarely means it."""
    if a.get("pattern") is not None:
        pattern = TopicPattern(a["pattern"], per_name=True)
        if any(pattern.fullmatch(t) for t in c.topics if not is_internal_topic(t)):
            return []
        return [f"No topic matches the pattern {a['pattern']!r} yet: consumer {a['member']!r} joins group "
                f"{a['group']!r} with no partitions until a matching topic is created"]
    missing = [t for t in a["topics"] if t not in c.topics]
    if not missing:
        return []
    joined = f"consumer {a['member']!r} joins group {a['group']!r} anyway (as Kafka allows)"
    if len(missing) == 1:
        return [f"Topic {missing[0]!r} does not exist: {joined} and gets no partitions of it until it is created"]
    names = ", ".join(repr(t) for t in missing)
    return [f"Topics {names} do not exist: {joined} and gets no partitions of them until they are created"]


def _consumer_join(c: Cluster, a: dict, i: int) -> Warnings:
    """Subscribe consumer `member` of `group` to `topics` (or `pattern`) and wait (up to
    `timeout_ms`) until it is in a stable generation. With `poll_every_ms` it runs as an
    application that polls on its own (consumer_app.PollLoop: `processing_ms` per record,
    `commit` auto|before|after|none, into sink `sink` of kind `sink_kind`); otherwise it polls
    only here and in consumer_poll steps, as an application blocked elsewhere would."""
    from engine.clients.consumer_app import PollLoop
    from engine.clients.sinks import sink_for
    old = _claim_member_name(c, a["member"])
    warnings = _join_warnings(c, a)
    config = dict(a.get("config") or {})
    config.setdefault("group.id", a["group"])
    if "assignor" in a:
        config["partition.assignment.strategy"] = a["assignor"]
    consumer = c.consumer(a["member"], config)
    if old is not None:
        # The new client sits on the old one's network node: answers still on their way to the
        # old one carry its incarnation, and must not be taken for the new one's.
        consumer.client.incarnation = old.client.incarnation + 1
    if a.get("pattern") is not None:
        consumer.subscribe(pattern=a["pattern"])
    else:
        consumer.subscribe(list(a["topics"]))
    timeout = a.get("timeout_ms", 15000)
    if a.get("poll_every_ms") is not None:
        sink = sink_for(c.sinks, a["sink"], a.get("sink_kind", "list")) if a.get("sink") else None
        PollLoop(consumer, poll_interval_ms=a["poll_every_ms"], processing_ms=a.get("processing_ms", 0),
                 commit=a.get("commit", "auto"), sink=sink, max_records=a.get("max_records")).start()
        _run_while(c, lambda: not consumer.is_stable(), timeout)
        return warnings
    end = c.now_ms + timeout
    while not consumer.is_stable() and c.now_ms < end:
        consumer.poll(a.get("max_records"), timeout_ms=end - c.now_ms)
    return warnings


def _consumer_poll(c: Cluster, a: dict, i: int) -> None:
    _consumer(c, a).poll(a.get("max_records"), timeout_ms=a.get("timeout_ms", 1000))


def _consumer_commit(c: Cluster, a: dict, i: int) -> None:
    _consumer(c, a).commit_sync(a.get("offsets"))


def _consumer_crash(c: Cluster, a: dict, i: int) -> None:
    _consumer(c, a).crash()


def _consumer_leave(c: Cluster, a: dict, i: int) -> None:
    _consumer(c, a).close()


STEPS: dict[str, Step] = {
    "create_topic": _create_topic,
    "produce": _produce,
    "kill_broker": _kill_broker,
    "kill_controller": _kill_controller,
    "kill_controller_node": _kill_controller_node,
    "restart_controller_node": _restart_controller_node,
    "restart_broker": _restart_broker,
    "pause_fetcher": _pause_fetcher,
    "resume_fetcher": _resume_fetcher,
    "partition_network": _partition_network,
    "heal_network": _heal_network,
    "slow_broker": _slow_broker,
    "flush": _flush,
    "run": _run,
    "step": _step,
    "run_until_idle": _run_until_idle,
    "run_until": _run_until,
    "consumer_join": _client_step(_consumer_join),
    "consumer_poll": _client_step(_consumer_poll),
    "consumer_commit": _client_step(_consumer_commit),
    "consumer_crash": _consumer_crash,
    "consumer_leave": _client_step(_consumer_leave),
    "add_partitions": _add_partitions,
    "delete_topic": _delete_topic,
    "reassign_partitions": _reassign_partitions,
    "elect_leaders": _elect_leaders,
}
