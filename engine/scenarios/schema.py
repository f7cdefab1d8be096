"""The arguments of every scenario step: declared once, checked before the step runs.

The lab's commands are the scenario steps (runner.STEPS) and they arrive as JSON — from scenario
files, from the browser, from tests. Python's JSON reader lets through NaN and Infinity, a string
where a list was meant (which would make one record per character), 1e13 ms (which would keep a
worker busy for good) or `true` as a broker id. This module owns what each step accepts:

- `SCHEMAS`: one `StepSchema` per step, a tuple of `Field`s (name, kind, required or not, range
  or allowed values, pattern, list element, maximum length) and the rules between fields;
- `check_step(command, args)`: the arguments normalised (a whole-valued float such as 5.0
  becomes 5; nothing else changes), or `StepArgumentError` naming the step's field, what is wrong
  and what is allowed ("slow_broker.delay_ms must be a whole number from 0 to 60000, not -5").

Nothing is clamped: a value outside its range is refused. Rules: true/false is not a number;
numbers are finite; a float is taken only where a float makes sense (config values, event
fields to match); waits are at most ten virtual minutes; names and texts have a maximum length;
topic names follow Kafka's rules; unknown argument names are refused. What needs the cluster
(does broker 4 exist? is consumer c1 taken?) is checked by the step when it runs (runner.py).
Pure Python: no Django.
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.broker.broker import CRASH_MODES
from engine.clients.consumer_app import COMMIT_MODES
from engine.clients.consumer_state import ASSIGNOR_CLASSES
from engine.clients.sinks import SINK_KINDS
from engine.cluster import MAX_BROKERS
from engine.common.errors import Errors, KafkaError
from engine.common.topics import LEGAL as LEGAL_TOPIC
from engine.common.topics import MAX_NAME_LENGTH as MAX_TOPIC_LENGTH
from engine.config import DEDICATED_CONTROLLER_BASE, METADATA_MODES
from engine.events import EVENT_TYPES, event_fields
from engine.groups.assignors import ASSIGNORS
from engine.replication.fetcher import TRUNCATION_MODES
from engine.topic_pattern import PatternError, TopicPattern

MAX_WAIT_MS = 600_000            # every timeout and wait: ten virtual minutes, as step_until
MAX_DELAY_MS = 60_000            # slow_broker: a minute of extra network delay is already a dead link
MIN_POLL_EVERY_MS = 10           # a poll loop faster than that only floods the event log
MAX_STEP_ACTIONS = 100_000       # `step`'s count of scheduler actions
MAX_PARTITIONS = 1_000           # per topic in a scenario (a lab session's limit is lower)
MAX_RECORDS = 100_000            # records one produce step carries
MAX_RECORD_CHARS = 1_000_000     # a key or a value: about Kafka's default message.max.bytes
MAX_CLIENT_NAME = 100            # producer, consumer and sink names (they become network node names)
MAX_GROUP_ID = 249
MAX_OBJECT_KEYS = 200            # a config, a match, an offsets object
MAX_CONFIG_TEXT = 10_000
MAX_PATTERN = 1_000
MAX_OFFSET = 2**63 - 1

NAME = re.compile(r"[A-Za-z0-9._-]+")
NAME_WORDS = "letters, digits, '.', '_' or '-'"
NO_CONTROL_CHARS = re.compile(r"[^\x00-\x1f\x7f]+")
TOPIC_PARTITION = re.compile(r"([a-zA-Z0-9._-]{1,249})-(\d{1,9})")


class StepArgumentError(KafkaError, ValueError):
    """A step's argument is wrong: `command` and `field` say which, the message what is allowed.
    `kafka_name` is Kafka's error for it (INVALID_TOPIC_EXCEPTION for a topic name)."""
    error = Errors.INVALID_REQUEST

    def __init__(self, message: str, command: str = "", field: str = "",
                 kafka_name: str = Errors.INVALID_REQUEST) -> None:
        super().__init__(message, error=kafka_name)
        self.command, self.field = command, field


@dataclass(frozen=True)
class Field:
    """One argument of a step. `kind` names its check (see _CHECKS); `low`/`high` bound a whole
    number, `max_length` a text's characters, a list's items or an object's keys."""
    name: str
    kind: str
    required: bool = False
    nullable: bool = False          # null is allowed (and means what leaving it out means)
    low: int = 0
    high: int = 0
    choices: tuple = ()
    min_length: int = 0
    max_length: int = 0
    item: Field | None = None       # a list's elements
    pattern: re.Pattern | None = None
    pattern_words: str = ""         # the pattern as people read it
    kafka_error: str = Errors.INVALID_REQUEST

    def element(self) -> Field:
        """A list's element field (every list field is declared with one)."""
        if self.item is None:
            raise TypeError(f"list field {self.name!r} declares no item field")
        return self.item


@dataclass(frozen=True)
class StepSchema:
    """A step's fields and the rules between them: `one_of` groups need exactly one of their
    fields, `exclusive` pairs may not come together, `needs` pairs say a field needs another;
    `check` runs last, for a rule only this step has."""
    fields: tuple[Field, ...] = ()
    one_of: tuple[tuple[str, ...], ...] = ()
    exclusive: tuple[tuple[str, str, str], ...] = ()     # (a, b, why)
    needs: tuple[tuple[str, str, str], ...] = ()         # (field, the field it needs, why)
    check: Callable[[str, dict], None] | None = None

    def names(self) -> list[str]:
        return [f.name for f in self.fields]


# -- field kinds ------------------------------------------------------------------------------
def _fail(command: str, f: Field, value: Any) -> StepArgumentError:
    shown = _kind_word(value) if f.kind in _CONTAINERS or isinstance(value, (list, dict)) else _shown(value)
    if isinstance(value, (str, list, dict)) and f.max_length and len(value) > f.max_length:
        shown = f"{_kind_word(value)} of {len(value)} {'characters' if isinstance(value, str) else 'items'}"
    elif isinstance(value, list) and len(value) < f.min_length:
        shown = "an empty list"
    return StepArgumentError(f"{command}.{f.name} must be {describe(f)}, not {shown}", command, f.name, f.kafka_error)


def _fail_inside(command: str, f: Field, reason: str) -> StepArgumentError:
    """An element of a list or an object is wrong: say which."""
    return StepArgumentError(f"{command}.{f.name} must be {describe(f)}: {reason}", command, f.name, f.kafka_error)


def _check_whole(command: str, f: Field, value: Any) -> int:
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)   # 5.0 from a JSON writer that prints floats is the number 5
    if isinstance(value, bool) or not isinstance(value, int) or not f.low <= value <= f.high:
        raise _fail(command, f, value)
    return value


def _check_flag(command: str, f: Field, value: Any) -> bool:
    if not isinstance(value, bool):
        raise _fail(command, f, value)
    return value


def _check_text(command: str, f: Field, value: Any) -> str:
    if (not isinstance(value, str) or not f.min_length <= len(value) <= f.max_length
            or (f.pattern is not None and not f.pattern.fullmatch(value))):
        raise _fail(command, f, value)
    return value


def _check_topic(command: str, f: Field, value: Any) -> str:
    if (not isinstance(value, str) or not 1 <= len(value) <= MAX_TOPIC_LENGTH or value in (".", "..")
            or not LEGAL_TOPIC.fullmatch(value)):
        raise _fail(command, f, value)
    return value


def _check_choice(command: str, f: Field, value: Any) -> Any:
    # `value in choices` alone would take True for 1 and 1.0 for 1: compare type and value.
    if not any(type(value) is type(c) and value == c for c in f.choices):
        raise _fail(command, f, value)
    return value


def _check_list(command: str, f: Field, value: Any) -> list:
    if not isinstance(value, list) or not f.min_length <= len(value) <= f.max_length:
        raise _fail(command, f, value)
    item = f.element()
    out: list[Any] = []
    for index, element in enumerate(value):
        if element is None and item.nullable:
            out.append(None)
            continue
        try:
            out.append(_CHECKS[item.kind](command, item, element))
        except StepArgumentError:
            raise _fail_inside(command, f, f"item {index} is {_shown(element)}") from None
    return out


def _check_config(command: str, f: Field, value: Any) -> dict:
    """Kafka settings: names to scalar values (text, whole or finite number, true/false, null)."""
    _check_object(command, f, value)
    for key, setting in value.items():
        if not NAME.fullmatch(key) or len(key) > MAX_TOPIC_LENGTH:
            raise _fail_inside(command, f, f"{_shown(key)} is not a setting's name")
        if key == "broker.rack" and isinstance(setting, dict) and len(setting) <= MAX_OBJECT_KEYS:
            continue    # broker id -> rack, one per broker (engine.config.parse_broker_racks checks it)
        if not _is_scalar(setting) or (isinstance(setting, str) and len(setting) > MAX_CONFIG_TEXT):
            raise _fail_inside(command, f, f"{key} is {_shown(setting)}; a setting is a string (at most "
                                           f"{MAX_CONFIG_TEXT} characters), a finite number, true/false or null")
    return dict(value)


def _check_match(command: str, f: Field, value: Any) -> dict:
    """Event fields to match: names to scalars, or lists of scalars (an ISR, a replica list)."""
    _check_object(command, f, value)
    for key, wanted in value.items():
        plain = _is_scalar(wanted) or (isinstance(wanted, list) and len(wanted) <= 100
                                       and all(_is_scalar(w) for w in wanted))
        if not plain:
            raise _fail_inside(command, f, f"{key} is {_shown(wanted)}; a value to match is a string, a finite "
                                           f"number, true/false, null or a list of them")
    return dict(value)


def _check_offsets(command: str, f: Field, value: Any) -> dict:
    """"topic-partition" to the offset to commit, or to [offset, leader epoch]."""
    _check_object(command, f, value)
    for key, offset in value.items():
        if not TOPIC_PARTITION.fullmatch(key):
            raise _fail_inside(command, f, f"{_shown(key)} is not a topic-partition like \"orders-0\"")
        pair = isinstance(offset, list) and len(offset) == 2
        parts = offset if pair else [offset]
        if not all(_whole_in(p, -1 if i else 0, MAX_OFFSET) for i, p in enumerate(parts)):
            raise _fail_inside(command, f, f"{key} is {_shown(offset)}; an offset is a whole number from 0, "
                                           f"or [offset, leader epoch]")
    return {k: (list(v) if isinstance(v, list) else int(v)) for k, v in value.items()}


def _check_node(command: str, f: Field, value: Any) -> int | str:
    """A network node: a broker id, or a node's name ("broker-1", "producer-p1", "consumer-c1")."""
    if _whole_in(value, 1, MAX_BROKERS):
        return int(value)
    if isinstance(value, str) and 1 <= len(value) <= MAX_CLIENT_NAME + 9 and NAME.fullmatch(value):
        return value
    raise _fail(command, f, value)


def _check_regex(command: str, f: Field, value: Any) -> str:
    _check_text(command, f, value)
    try:
        TopicPattern(value)   # the syntax the engine runs (engine/topic_pattern.py), checked before it runs
    except PatternError as error:
        raise _fail_inside(command, f, f"{_shown(value)} is not a pattern the lab runs ({error})") from None
    return value


def _check_object(command: str, f: Field, value: Any) -> None:
    if not isinstance(value, dict) or len(value) > f.max_length:
        raise _fail(command, f, value)


def _check_plan(command: str, f: Field, value: Any) -> dict:
    """A reassignment plan's shape, {"version": 1, "partitions": [...]} with at most `max_length`
    partitions; what each entry names is checked when the step runs."""
    if not isinstance(value, dict) or not isinstance(value.get("partitions"), list) \
            or len(value["partitions"]) > f.max_length:
        raise _fail(command, f, value)
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        raise _fail_inside(command, f, "it holds a value JSON cannot carry (NaN, Infinity)") from None
    return value


def _check_assignors(command: str, f: Field, value: Any) -> str:
    """One assignor or a comma-separated list, as partition.assignment.strategy takes them."""
    names = [n.strip() for n in value.split(",")] if isinstance(value, str) and len(value) <= 1000 else [""]
    if not all(n in ASSIGNORS or n in ASSIGNOR_CLASSES for n in names):
        raise _fail(command, f, value)
    return value


_CHECKS: dict[str, Callable[[str, Field, Any], Any]] = {
    "whole": _check_whole, "flag": _check_flag, "text": _check_text, "topic": _check_topic,
    "choice": _check_choice, "list": _check_list, "config": _check_config, "match": _check_match,
    "offsets": _check_offsets, "node": _check_node, "regex": _check_regex, "assignors": _check_assignors,
    "plan": _check_plan,
}
_CONTAINERS = frozenset({"list", "config", "match", "offsets", "plan"})


def describe(f: Field) -> str:
    """What `f` accepts, in words (the end of every error message about it)."""
    text = _describe_kind(f)
    return f"{text} (or null)" if f.nullable and f.kind not in _CONTAINERS else text


def _describe_kind(f: Field) -> str:
    kind = f.kind
    if kind == "whole":
        return f"a whole number from {f.low} to {f.high}"
    if kind == "flag":
        return "true or false"
    if kind == "text":
        if f.pattern is not None:
            return f"{f.min_length} to {f.max_length} {f.pattern_words}"
        return f"a string of {f.min_length} to {f.max_length} characters"
    if kind == "topic":
        return (f"a topic name: 1 to {MAX_TOPIC_LENGTH} ASCII letters, digits, '.', '_' or '-' "
                f"(not \".\" or \"..\")")
    if kind == "choice":
        return "one of " + ", ".join(_shown(c) for c in f.choices)
    if kind == "list":
        noun = _plural(f.element())
        return f"a list of {f.min_length} to {f.max_length} {noun}"
    if kind == "config":
        return f"an object of at most {f.max_length} Kafka settings, like {{\"acks\": \"all\"}}"
    if kind == "match":
        return "an object of event fields to values, like {\"broker\": 2}"
    if kind == "offsets":
        return "an object of \"topic-partition\" to offset, like {\"orders-0\": 12}"
    if kind == "node":
        return (f"a broker id (1 to {MAX_BROKERS}) or a node's name such as \"broker-1\", "
                f"\"producer-p1\" or \"consumer-c1\"")
    if kind == "regex":
        return f"a regular expression of 1 to {f.max_length} characters"
    if kind == "plan":
        return (f"a reassignment plan like {{\"version\": 1, \"partitions\": [{{\"topic\": \"t\", \"partition\": 0, "
                f"\"replicas\": [1, 2, 3]}}]}} (at most {f.max_length} partitions)")
    if kind == "assignors":
        return "an assignor (" + ", ".join(sorted(ASSIGNORS)) + ") or a comma-separated list of them"
    raise AssertionError(f"no description for kind {kind!r}")


def _plural(item: Field) -> str:
    nouns = {"text": "strings", "whole": f"whole numbers from {item.low} to {item.high}", "topic": "topic names",
             "list": f"lists of {_plural(item.item)}" if item.item else "lists"}
    noun = nouns.get(item.kind, "values")
    return f"{noun} (or null)" if item.nullable else noun


def _shown(value: Any) -> str:
    """A value as JSON writes it (NaN and Infinity as Python's reader spells them)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, (list, dict)):
        try:
            text = json.dumps(value, ensure_ascii=False, allow_nan=False)
        except (TypeError, ValueError):
            return _kind_word(value)
        return text if len(text) <= 60 else _kind_word(value)
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "…\""


def _kind_word(value: Any) -> str:
    words = {str: "a string", list: "a list", dict: "an object", bool: "true or false", type(None): "null"}
    for kind, word in words.items():
        if isinstance(value, kind):
            return _shown(value) if kind in (bool, type(None)) else word
    return _shown(value) if isinstance(value, (int, float)) else type(value).__name__


def _is_scalar(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    return value is None or isinstance(value, (str, bool, int))


def _whole_in(value: Any, low: int, high: int) -> bool:
    return not isinstance(value, bool) and isinstance(value, int) and low <= value <= high


# -- the steps ----------------------------------------------------------------------------------
def _whole(name: str, low: int, high: int, **kw: Any) -> Field:
    return Field(name, "whole", low=low, high=high, **kw)


def _client_name(name: str, **kw: Any) -> Field:
    return Field(name, "text", min_length=1, max_length=MAX_CLIENT_NAME, pattern=NAME,
                 pattern_words=NAME_WORDS, **kw)


def _wait(name: str) -> Field:
    return _whole(name, 0, MAX_WAIT_MS)


BROKER = _whole("broker", 1, MAX_BROKERS, required=True)
CONTROLLER_NODE = _whole("node", DEDICATED_CONTROLLER_BASE + 1, DEDICATED_CONTROLLER_BASE + 3, required=True)
TOPIC = Field("topic", "topic", required=True, kafka_error=Errors.INVALID_TOPIC_EXCEPTION)
MEMBER = _client_name("member", required=True)
CONFIG = Field("config", "config", nullable=True, max_length=MAX_OBJECT_KEYS)
CRASH_MODE = Field("mode", "choice", choices=("process", "power", *CRASH_MODES))
MAX_RECORDS_FIELD = _whole("max_records", 1, MAX_RECORDS, nullable=True)
RECORD_TEXT = Field("", "text", nullable=True, max_length=MAX_RECORD_CHARS)


def _check_run_until(command: str, args: dict) -> None:
    """A match names fields the event kind has."""
    unknown = sorted(set(args.get("match") or {}) - set(event_fields(args["event"])))
    if unknown:
        raise StepArgumentError(f"{command}.match names field(s) {', '.join(unknown)} that an event of kind "
                                f"{args['event']} does not have (its fields: {', '.join(event_fields(args['event']))})",
                                command, "match")


SCHEMAS: dict[str, StepSchema] = {
    "create_topic": StepSchema((
        TOPIC, _whole("partitions", 1, MAX_PARTITIONS), _whole("replication_factor", 1, MAX_BROKERS), CONFIG,
        Field("replica_assignment", "list", nullable=True, min_length=1, max_length=MAX_PARTITIONS,
              item=Field("", "list", min_length=1, max_length=MAX_BROKERS, item=_whole("", 1, MAX_BROKERS))),
    )),
    "produce": StepSchema((
        TOPIC, Field("value", "text", nullable=True, max_length=MAX_RECORD_CHARS),
        Field("values", "list", nullable=True, min_length=1, max_length=MAX_RECORDS, item=RECORD_TEXT),
        Field("key", "text", nullable=True, max_length=MAX_RECORD_CHARS),
        _whole("partition", 0, MAX_PARTITIONS - 1, nullable=True),
        Field("acks", "choice", choices=(0, 1, -1, "all", "0", "1", "-1")),
        _client_name("producer"), CONFIG, Field("flush", "flag"),
    ), exclusive=(("value", "values", "give one record's value, or a list of values"),
                  ("producer", "acks", "with a producer, acks is a producer setting: put it in config")),
       needs=(("config", "producer", "the settings are a named producer's"),
              ("flush", "producer", "only a named producer holds records back"))),
    "kill_broker": StepSchema((
        _whole("broker", 1, MAX_BROKERS),
        Field("leader_of", "text", min_length=3, max_length=260, pattern=TOPIC_PARTITION,
              pattern_words="characters of a topic-partition like \"t-0\""),
        Field("controller", "choice", choices=(True,)), CRASH_MODE,
    ), one_of=(("broker", "leader_of", "controller"),)),
    "kill_controller": StepSchema((CRASH_MODE,)),
    # KRaft's dedicated controllers (process.roles=controller): nodes 101-103 (engine.config).
    "kill_controller_node": StepSchema((CONTROLLER_NODE,)),
    "restart_controller_node": StepSchema((CONTROLLER_NODE,)),
    "restart_broker": StepSchema((BROKER,)),
    "pause_fetcher": StepSchema((BROKER,)),
    "resume_fetcher": StepSchema((BROKER,)),
    "partition_network": StepSchema((Field("a", "node", required=True), Field("b", "node", required=True))),
    "heal_network": StepSchema((Field("a", "node", required=True), Field("b", "node", required=True))),
    "slow_broker": StepSchema((BROKER, _whole("delay_ms", 0, MAX_DELAY_MS))),
    "flush": StepSchema((BROKER,)),
    "run": StepSchema((_whole("ms", 0, MAX_WAIT_MS, required=True),)),
    "step": StepSchema((_whole("count", 1, MAX_STEP_ACTIONS),)),
    "run_until_idle": StepSchema((_wait("max_ms"),)),
    "run_until": StepSchema((
        Field("event", "choice", required=True, choices=tuple(sorted(EVENT_TYPES))),
        Field("match", "match", nullable=True, max_length=MAX_OBJECT_KEYS), _wait("max_ms"),
    ), check=_check_run_until),
    "consumer_join": StepSchema((
        Field("group", "text", required=True, min_length=1, max_length=MAX_GROUP_ID,
              pattern=NO_CONTROL_CHARS, pattern_words="characters (no control characters)"),
        MEMBER,
        Field("topics", "list", min_length=1, max_length=MAX_OBJECT_KEYS, item=Field("", "topic")),
        Field("pattern", "regex", min_length=1, max_length=MAX_PATTERN),
        Field("assignor", "assignors"), CONFIG, _wait("timeout_ms"),
        _whole("poll_every_ms", MIN_POLL_EVERY_MS, MAX_WAIT_MS), _wait("processing_ms"),
        Field("commit", "choice", choices=COMMIT_MODES), _client_name("sink"),
        Field("sink_kind", "choice", choices=tuple(SINK_KINDS)), MAX_RECORDS_FIELD,
    ), one_of=(("topics", "pattern"),),
       needs=(("processing_ms", "poll_every_ms", "only a consumer that polls by itself processes records"),
              ("commit", "poll_every_ms", "only a consumer that polls by itself commits by itself"),
              ("sink", "poll_every_ms", "only a consumer that polls by itself writes to a sink"),
              ("sink_kind", "sink", "it is the kind of that sink"))),
    "consumer_poll": StepSchema((MEMBER, MAX_RECORDS_FIELD, _wait("timeout_ms"))),
    "consumer_commit": StepSchema((MEMBER, Field("offsets", "offsets", nullable=True, max_length=10_000))),
    "consumer_crash": StepSchema((MEMBER,)),
    "consumer_leave": StepSchema((MEMBER,)),
    "add_partitions": StepSchema((TOPIC, _whole("count", 1, MAX_PARTITIONS, required=True))),
    "delete_topic": StepSchema((TOPIC,)),
    # The plan's fields (topics, partitions, brokers) are checked against the cluster when the step
    # runs (engine/replication/reassignment.py), naming the field: "partitions[0].replicas".
    "reassign_partitions": StepSchema((Field("plan", "plan", required=True, max_length=MAX_PARTITIONS),
                                       Field("wait", "flag"))),
    "elect_leaders": StepSchema((
        Field("election_type", "choice", choices=("preferred",)),
        Field("topic", "topic", kafka_error=Errors.INVALID_TOPIC_EXCEPTION), _whole("partition", 0, MAX_PARTITIONS - 1),
        Field("all_topic_partitions", "choice", choices=(True,)),
    ), one_of=(("topic", "all_topic_partitions"),),
       needs=(("topic", "partition", "kafka-leader-election names one partition: --topic with --partition"),
              ("partition", "topic", "a partition of which topic"))),
}


# A scenario's "cluster": its shape, checked with the same rules (the name "cluster" heads the errors).
CLUSTER_SCHEMA = StepSchema((
    _whole("brokers", 1, MAX_BROKERS), _whole("seed", -2**63, 2**63 - 1),
    Field("truncation", "choice", nullable=True, choices=TRUNCATION_MODES), CONFIG,
    # Where the metadata lives: "zookeeper" (the default, so scenarios written before KRaft keep
    # their mode and outcome) or "kraft" (Kafka 4's only mode).
    Field("metadata", "choice", nullable=True, choices=METADATA_MODES),
))


# -- checking -----------------------------------------------------------------------------------
def check_step(command: Any, args: Any) -> dict:
    """`args` of step `command`, checked and normalised; raises StepArgumentError."""
    schema = SCHEMAS.get(command) if isinstance(command, str) else None
    if schema is None:
        raise StepArgumentError(f"Unknown command {_shown(command)} (known: {', '.join(sorted(SCHEMAS))})",
                                str(command))
    return _check_args(command, schema, args)


def check_cluster(cluster: Any) -> dict:
    """A scenario's "cluster" object (brokers, seed, truncation, config), checked and normalised."""
    return _check_args("cluster", CLUSTER_SCHEMA, cluster)


def _check_args(command: str, schema: StepSchema, args: Any) -> dict:
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise StepArgumentError(f"The arguments of {command} must be an object, not {_kind_word(args)}", command)
    known = schema.names()
    unknown = [name for name in args if name not in known]
    if unknown:
        raise StepArgumentError(f"{command} has no argument {_shown(unknown[0])} "
                                f"(its arguments: {', '.join(known) or 'none'})", command, str(unknown[0]))
    out = {}
    for f in schema.fields:
        if f.name in args:
            out[f.name] = _check_field(command, f, args[f.name])
        elif f.required:
            raise StepArgumentError(f"{command}.{f.name} is required: {describe(f)}", command, f.name)
    _check_relations(command, schema, out)
    if schema.check is not None:
        schema.check(command, out)
    return out


def _check_field(command: str, f: Field, value: Any) -> Any:
    if value is None:
        if f.nullable:
            return None
        raise _fail(command, f, value)
    return _CHECKS[f.kind](command, f, value)


def _check_relations(command: str, schema: StepSchema, args: dict) -> None:
    def given(name: str) -> bool:
        value = args.get(name)
        return value is not None and value is not False   # null and false say "not this"
    for group in schema.one_of:
        present = [name for name in group if given(name)]
        if len(present) != 1:
            found = f"not {' and '.join(present)} together" if present else "none was given"
            raise StepArgumentError(f"{command} needs exactly one of {', '.join(group)} ({found})",
                                    command, (present or group)[-1])
    for a, b, why in schema.exclusive:
        if given(a) and given(b):
            raise StepArgumentError(f"{command} takes {a} or {b}, not both: {why}", command, b)
    for name, needed, why in schema.needs:
        if given(name) and not given(needed):
            raise StepArgumentError(f"{command}.{name} needs {needed}: {why}", command, name)


def is_internal_topic(topic: str) -> bool:
    """Kafka's own topics (__consumer_offsets, __transaction_state): brokers create and write them."""
    return topic.startswith("__")
