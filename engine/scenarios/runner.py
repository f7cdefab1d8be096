"""Runs a scenario against a fresh cluster and reports the final state.

Each step is a one-key object `{"<command>": {arguments}}`. A step that fails as a whole (a bad
topic name, a replication factor larger than the live brokers) stops the run with a
ScenarioError naming the step — unless the step says `"expect_error": true`, in which case the
error is recorded and the run goes on. Produce answers (acks, errors) are not step failures:
they are what the scenario is about, and they land in the result's "produced" list.
"""
from __future__ import annotations

import json
import os
from typing import Any, Callable

from engine import events as ev
from engine.broker.errors import InvalidConfigError
from engine.cluster import Cluster, ClusterError

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
    unknown = set(cluster) - {"brokers", "seed", "config", "truncation"}
    if unknown:
        raise ScenarioError(f"Unknown cluster field(s): {', '.join(sorted(unknown))}")
    for index, step in enumerate(scenario["steps"]):
        command, _ = _split_step(index, step)
        if command not in STEPS:
            raise ScenarioError(f"step {index}: unknown command {command!r} (known: {', '.join(sorted(STEPS))})")


def _split_step(index: int, step: Any) -> tuple[str, dict]:
    if not isinstance(step, dict):
        raise ScenarioError(f"step {index}: a step is an object like {{\"run\": {{\"ms\": 1000}}}}")
    commands = [k for k in step if k not in ("expect_error", "note")]
    if len(commands) != 1:
        raise ScenarioError(f"step {index}: needs exactly one command, found {commands or 'none'}")
    args = step[commands[0]]
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise ScenarioError(f"step {index} ({commands[0]}): arguments must be an object")
    return commands[0], args


def run_scenario(scenario: dict, data_dir: str, *, trace: Callable[[ev.Event], None] | None = None,
                 cluster_factory: Callable[..., Cluster] = Cluster) -> tuple[Cluster, dict]:
    """Play `scenario` into a new cluster in `data_dir`; returns the cluster and the result dict."""
    validate(scenario)
    shape = scenario.get("cluster", {})
    cluster = cluster_factory(brokers=int(shape.get("brokers", 3)), data_dir=data_dir,
                              seed=int(shape.get("seed", 0)), config=shape.get("config") or {},
                              truncation=shape.get("truncation"), on_event=trace)
    errors = []
    for index, step in enumerate(scenario["steps"]):
        command, args = _split_step(index, step)
        try:
            STEPS[command](cluster, args, index)
        except (ClusterError, InvalidConfigError, ValueError, KeyError, TypeError) as error:
            message = f"step {index} ({command}) failed: {_describe(error)}"
            if not step.get("expect_error"):
                raise ScenarioError(message) from error
            errors.append({"step": index, "command": command, "error": _describe(error),
                           "kafka_error": getattr(error, "kafka_name", None)})
        else:
            if step.get("expect_error"):
                raise ScenarioError(f"step {index} ({command}) was expected to fail but succeeded")
    result = cluster.state()
    result["name"] = scenario.get("name", "")
    result["step_errors"] = errors
    return cluster, result


def _describe(error: Exception) -> str:
    text = str(error) or type(error).__name__
    if isinstance(error, KeyError):
        text = f"missing argument {text}"
    return text


# -- the steps -----------------------------------------------------------------------------
def _create_topic(c: Cluster, a: dict, i: int) -> None:
    c.create_topic(a["topic"], int(a.get("partitions", 1)), int(a.get("replication_factor", 1)),
                   config=a.get("config"), replica_assignment=a.get("replica_assignment"))


def _produce(c: Cluster, a: dict, i: int) -> None:
    """Without "producer": one request per record (Cluster.produce). With "producer": the named
    Producer (created with "config" on first use) takes the records; they wait for linger.ms
    like Kafka's, unless "flush": true runs the cluster until every record is answered."""
    values = a["values"] if "values" in a else [a.get("value")]
    if "producer" not in a:
        for value in values:
            c.produce(a["topic"], a.get("key"), value, partition=a.get("partition"), acks=a.get("acks", -1), tag=i)
        return
    if "acks" in a:
        raise ValueError("with a producer, acks is a producer setting: put it in \"config\"")
    name = str(a["producer"])
    if "config" in a and name in c.producers and c.producers[name].given_config != dict(a["config"] or {}):
        raise ValueError(f"producer {name!r} already exists with another config")
    producer = c.producer(name, a.get("config"))
    for value in values:
        producer.send(a["topic"], a.get("key"), value, partition=a.get("partition"), tag=i)
    if a.get("flush"):
        producer.flush()


def _broker_arg(c: Cluster, a: dict) -> int:
    if "leader_of" in a:
        topic, _, partition = str(a["leader_of"]).rpartition("-")
        leader = c.leader_of(topic, int(partition))
        if leader < 0:
            raise ClusterError(f"{a['leader_of']} has no leader", "LEADER_NOT_AVAILABLE")
        return leader
    if a.get("controller"):
        return c.controller_id()
    return int(a["broker"])


def _kill_broker(c: Cluster, a: dict, i: int) -> None:
    c.kill_broker(_broker_arg(c, a), a.get("mode", "process"))


def _run(c: Cluster, a: dict, i: int) -> None:
    c.run_for(int(a["ms"]))


def _step(c: Cluster, a: dict, i: int) -> None:
    for _ in range(int(a.get("count", 1))):
        c.step()


def _run_until(c: Cluster, a: dict, i: int) -> None:
    """Step until an event of `event` kind whose fields match `match` has happened."""
    kind, match = a["event"], a.get("match", {})
    if kind not in ev.EVENT_TYPES:
        raise ValueError(f"unknown event kind {kind!r}")
    seen = []
    unsubscribe = c.subscribe(lambda e: seen.append(e) if e.kind == kind and all(
        getattr(e, k, None) == v for k, v in match.items()) else None)
    try:
        end = c.now_ms + int(a.get("max_ms", 600_000))
        while not seen:
            nxt = c.scheduler.next_time()
            if nxt is None or nxt > end:
                raise ClusterError(f"no {kind} event matching {match} within {a.get('max_ms', 600_000)} ms")
            c.step()
    finally:
        unsubscribe()


# -- consumer groups -----------------------------------------------------------------------
def _client_step(step: Callable[[Cluster, dict, int], None]) -> Callable[[Cluster, dict, int], None]:
    """A consumer's error (CommitFailedError, ...) fails the step like a cluster error does."""
    def run(c: Cluster, a: dict, i: int) -> None:
        from engine.clients.consumer_state import KafkaClientError
        try:
            step(c, a, i)
        except KafkaClientError as error:
            raise ClusterError(str(error), error.kafka_name) from error
    return run


def _run_while(c: Cluster, waiting: Callable[[], bool], max_ms: int) -> None:
    end = c.now_ms + max_ms
    while waiting():
        nxt = c.scheduler.next_time()
        if nxt is None or nxt > end:
            c.scheduler.advance_to(end)
            return
        c.scheduler.step()


def _consumer(c: Cluster, a: dict):
    if a["member"] not in c.consumers:
        raise ClusterError(f"There is no consumer {a['member']!r} (consumers: {sorted(c.consumers)})",
                           "INVALID_REQUEST")
    return c.consumers[a["member"]]


def _consumer_join(c: Cluster, a: dict, i: int) -> None:
    """Subscribe consumer `member` of `group` to `topics` (or `pattern`) and wait (up to
    `timeout_ms`) until it is in a stable generation. With `poll_every_ms` it runs as an
    application that polls on its own (consumer_app.PollLoop: `processing_ms` per record,
    `commit` auto|before|after|none, into sink `sink` of kind `sink_kind`); otherwise it polls
    only here and in consumer_poll steps, as an application blocked elsewhere would."""
    from engine.clients.consumer_app import PollLoop
    from engine.clients.sinks import sink_for
    config = dict(a.get("config") or {})
    config.setdefault("group.id", a["group"])
    if "assignor" in a:
        config["partition.assignment.strategy"] = a["assignor"]
    consumer = c.consumer(a["member"], config)
    if "pattern" in a:
        consumer.subscribe(pattern=a["pattern"])
    else:
        consumer.subscribe(list(a["topics"]))
    timeout = int(a.get("timeout_ms", 15000))
    if "poll_every_ms" in a:
        sink = sink_for(c, a["sink"], a.get("sink_kind", "list")) if a.get("sink") else None
        PollLoop(consumer, poll_interval_ms=int(a["poll_every_ms"]), processing_ms=int(a.get("processing_ms", 0)),
                 commit=a.get("commit", "auto"), sink=sink, max_records=a.get("max_records")).start()
        _run_while(c, lambda: not consumer.is_stable(), timeout)
        return
    end = c.now_ms + timeout
    while not consumer.is_stable() and c.now_ms < end:
        consumer.poll(a.get("max_records"), timeout_ms=end - c.now_ms)


def _consumer_poll(c: Cluster, a: dict, i: int) -> None:
    _consumer(c, a).poll(a.get("max_records"), timeout_ms=int(a.get("timeout_ms", 1000)))


STEPS: dict[str, Callable[[Cluster, dict, int], None]] = {
    "create_topic": _create_topic,
    "produce": _produce,
    "kill_broker": _kill_broker,
    "kill_controller": lambda c, a, i: c.kill_controller(a.get("mode", "process")),
    "restart_broker": lambda c, a, i: c.restart_broker(int(a["broker"])),
    "pause_fetcher": lambda c, a, i: c.pause_fetcher(int(a["broker"])),
    "resume_fetcher": lambda c, a, i: c.resume_fetcher(int(a["broker"])),
    "partition_network": lambda c, a, i: c.partition_network(a["a"], a["b"]),
    "heal_network": lambda c, a, i: c.heal_network(a["a"], a["b"]),
    "slow_broker": lambda c, a, i: c.slow_broker(int(a["broker"]), int(a.get("delay_ms", 0))),
    "flush": lambda c, a, i: c.flush_broker(int(a["broker"])),
    "run": _run,
    "step": _step,
    "run_until_idle": lambda c, a, i: c.run_until_idle(int(a.get("max_ms", 600_000))),
    "run_until": _run_until,
    "consumer_join": _client_step(_consumer_join),
    "consumer_poll": _client_step(_consumer_poll),
    "consumer_commit": _client_step(lambda c, a, i: _consumer(c, a).commit_sync(a.get("offsets"))),
    "consumer_crash": lambda c, a, i: _consumer(c, a).crash(),
    "consumer_leave": _client_step(lambda c, a, i: _consumer(c, a).close()),
    "add_partitions": lambda c, a, i: c.add_partitions(a["topic"], int(a["count"])),
}
