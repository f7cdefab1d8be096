"""The host's vocabulary: its errors, a cluster's shape, the command log's records, what a call
returns, and the journal a host writes its log to (lab/host.py uses them; lab/registry.py and the
tests too). Plain data, no engine state."""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from engine import events as ev
from engine.common.errors import KafkaError

CLOCK_STEPS = frozenset({"run", "step", "run_until_idle", "run_until"})
MIN_SPEED, MAX_SPEED = 0.1, 10.0
MAX_EVENTS_PER_CALL = 500       # events a call hands back by default; older ones are counted, not kept
MAX_MARKS = 500                 # timeline marks sent (the newest)
MAX_SCENARIO_STEPS = 10_000
STEP_UNTIL_MAX_MS = 600_000     # as the runner's run_until: ten virtual minutes
DISK_USAGE_TTL_S = 30.0         # how long a walk of the run dir is trusted (log growth is added to it)
CATCH_UP_WORK_MS = 40.0         # wall-clock work a live clock may do to catch up before a command
ENGINE_ERRORS = (KafkaError, ValueError, KeyError, TypeError)   # KafkaError: ClusterError, ProducerError, ...
CHECKPOINT_CHECK_EVERY = 64     # actions between two looks at whether a checkpoint is due

BUDGET_EXCEEDED = "BUDGET_EXCEEDED"   # the lab's error name for a call stopped by its budget (engine.sim.budget)
# The settings that set a call's budgets (read from the environment when a host is built).
WALL_BUDGET_SETTING = "KAFKA_LAB_CALL_WALL_BUDGET_MS"
VIRTUAL_BUDGET_SETTING = "KAFKA_LAB_CALL_VIRTUAL_BUDGET_MS"
ACTIONS_BUDGET_SETTING = "KAFKA_LAB_MAX_ACTIONS_PER_CALL"   # Limits.max_actions_per_call

# What one unit of forward motion did (see SessionHost._advance).
_ACTED, _MOVED, _WAIT = "acted", "moved", "wait"


class HostError(Exception):
    """A request the host refused or a command that failed; nothing was lost.
    `kafka_error` is Kafka's error name where one exists (or the lab's own, e.g. FUTURE_EXISTS);
    `events` what happened before it failed."""

    def __init__(self, message: str, kafka_error: str | None = None, events: Events | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.kafka_error = kafka_error
        self.events = events or Events([])


class _Withdrawn(Exception):
    """A new command ran out of its call's budget and was taken back (SessionHost._apply_new)."""


@dataclass(frozen=True)
class Shape:
    """A cluster's shape: what a fresh run of the session starts from."""
    brokers: int = 3
    seed: int = 0
    truncation: str = "leader-epoch"
    config: dict = field(default_factory=dict)

    @property
    def metadata(self) -> str:
        """Where the cluster keeps its metadata: the config's `metadata` ("kraft" or "zookeeper"). New
        sessions say so in their config (the form's default is KRaft); without it, the engine's
        default, ZooKeeper (scenarios written before KRaft, sessions stored before it)."""
        return str(self.config.get("metadata") or "zookeeper")


def _env_ms(name: str, default: float) -> float:
    value = float(os.environ.get(name) or default)
    if not value > 0:
        raise ValueError(f"{name} must be a number of milliseconds > 0, not {value!r}")
    return value


@dataclass(frozen=True)
class CallBudgets:
    """What one host call may spend besides its scheduler actions (Limits.max_actions_per_call):
    wall-clock time, and how far it may move virtual time. A call that would go over stops between
    two scheduler actions with a BUDGET_EXCEEDED error (lab/host.py says what each call does then).
    Wall time bounds what a worker thread is held for; virtual time bounds a clock move that would
    otherwise only be bounded by actions (a live clock far behind). Ten virtual minutes is the
    longest legal wait (engine.scenarios.schema.MAX_WAIT_MS), so the default leaves room for it."""
    wall_ms: float = field(default_factory=lambda: _env_ms(WALL_BUDGET_SETTING, 5_000))
    virtual_ms: int = field(default_factory=lambda: int(_env_ms(VIRTUAL_BUDGET_SETTING, 900_000)))


@dataclass
class CommandRecord:
    """One entry of the command log: a scenario step applied at `at_step` / `at_time_ms`, its
    events numbered from `first_seq` on. `running` while its call is still under way."""
    index: int
    at_step: int
    at_time_ms: int
    command: str
    args: dict
    tag: int            # the step number handed to the step function (the runner's "produced[].step")
    error: str | None = None
    kafka_error: str | None = None
    first_seq: int = -1
    running: bool = False
    warnings: list[str] = field(default_factory=list)   # what Kafka accepted but the learner may not mean

    def mark(self) -> dict[str, Any]:
        out = {"index": self.index, "step": self.at_step, "time_ms": self.at_time_ms,
               "first_seq": self.first_seq, "command": {self.command: self.args}}
        if self.running:
            out["running"] = True
        return out


@dataclass
class Events:
    """What one host call caused: its newest events (at most `max_events_per_call`, with their JSON
    in `texts`), how many older ones were left out, the model patch, commands that finished, and
    where the clock stood afterwards."""
    events: list[ev.Event]
    dropped: int = 0
    step: int = 0
    time_ms: int = 0
    next_due_ms: float | None = None
    behind: bool = False  # a live tick ran out of its work budget before the clock caught up
    texts: list[str] = field(default_factory=list)
    patch: dict | None = None
    seq: int = 0          # the next event's number (every event before it is in this call or earlier)
    record: CommandRecord | None = None   # the command `apply` logged
    warnings: list[str] = field(default_factory=list)
    model_reset: bool = False   # the cluster jumped (a rewind, a reset): send the whole model, not a patch
    actions: int = 0            # scheduler actions the call ran
    last_action: str | None = None   # the label of the last one ("broker-2: HW checkpoint")


class Journal:
    """Where a host writes its log so that it outlives the process. Each method is called with the
    host's lock held, on the thread running the host, and must not call back into the host. This
    base keeps nothing (tests, benchmarks); lab.registry's keeps the log in the database."""

    def appended(self, record: CommandRecord, step: int, time_ms: int) -> None:
        """`record` was applied and logged; the clock now stands at `step` / `time_ms`."""

    def finished(self, record: CommandRecord) -> None:
        """`record`'s call, which was running, ended (its `error` is known now)."""

    def cut(self, from_index: int) -> None:
        """The records from `from_index` on (the future) are gone."""

    def restored(self, records: list[CommandRecord]) -> None:
        """`records` (a future that was cut) are back at the end of the log."""

    def restarted(self, shape: Shape) -> None:
        """A fresh cluster of `shape` with an empty log; the previous log is history."""

def _describe(error: BaseException) -> str:
    text = str(error) or type(error).__name__
    if isinstance(error, KeyError):
        text = f"missing argument {text}"
    return text
