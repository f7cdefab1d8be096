"""Commands that block, run one scheduler action at a time under the host's clock.

Some scenario steps are an application blocked in a Kafka client call: `consumer_join` waits in
`poll()` until its group is stable, `consumer_poll` until records come or the timeout passes,
`consumer_commit` in `commitSync()`, `create_topic` until every partition has its leader. The
scenario runner runs them as Kafka's clients do — a loop of scheduler steps inside the call —
and that is right for a script. The lab cannot let a call own the clock for thousands of
actions: a learner pauses, steps and rewinds in the middle of a rebalance. So here each such
command runs in a thread of its own, strictly taking turns with the host:

- when the call wants the next action (`Scheduler.step`), the scheduler's `yield_step` hook hands
  the turn back to the host instead, and the call waits;
- the host runs that action as part of its own clock (live, paused and stepped, or replaying) and
  then resumes every waiting command once, in the order they started;
- a resumed call re-checks its condition exactly where the runner's loop would, and either asks
  for the next action again or returns.

So the actions, and the checks between them, are the runner's; only one thread runs at any time
(never two: the turn is handed over under a lock), which keeps a session deterministic: replaying
its log gives the same events and bytes. A thread per running command is cheap next to a command's
own work (a turn costs tens of microseconds), and only commands that may block get one
(`may_block`); the others run inline in the host's thread. (`create_topic` and `add_partitions`
also run the scheduler, until their partitions have leaders: a handful of actions, so they run
inline and a rewind into them lands just after them, as docs/lab-protocol.md says.)

A running command's thread holds its part of the engine's call stack, which cannot be saved: the
host takes engine checkpoints only while nothing runs here, and abandons running commands (their
calls unwind with `Abandoned`) when it throws a cluster away.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from engine.sim.scheduler import Scheduler

# The steps whose call can run the scheduler for long (see engine/scenarios/runner.py STEPS).
_CLIENT_CALLS = frozenset({"consumer_join", "consumer_poll", "consumer_commit", "consumer_leave"})
MAX_RUNNING = 16          # commands of one session running at once
TURN_TIMEOUT_S = 60.0     # a turn that does not come back in this long is a bug: fail loudly


def may_block(command: str, args: dict) -> bool:
    """Whether this step's call may wait on the cluster for long: a consumer's calls, and a named
    producer's `send` (blocked up to max.block.ms without metadata) and `flush`."""
    return command in _CLIENT_CALLS or (command == "produce" and "producer" in args)


class Abandoned(BaseException):
    """Raised inside a running command's call when its cluster is thrown away (a rewind, a reset):
    a BaseException, so that no `except Exception` in the engine swallows it."""


@dataclass(eq=False)
class RunningCommand:
    """One command whose call is under way; `error` is what it raised once `finished`."""
    index: int
    name: str
    finished: bool = False
    error: BaseException | None = None
    _turn: threading.Condition = field(default_factory=threading.Condition, repr=False)
    _owner: str = "host"                  # who may run: "host" or "command"
    _abandoned: bool = False
    _thread: threading.Thread | None = field(default=None, repr=False)

    # -- the host's side ------------------------------------------------------------------------
    def _give_turn(self) -> None:
        """Let the command run until it wants an action or returns (called by the host's thread)."""
        with self._turn:
            self._owner = "command"
            self._turn.notify_all()
            if not self._turn.wait_for(lambda: self._owner == "host", TURN_TIMEOUT_S):
                raise RuntimeError(f"command #{self.index} ({self.name}) did not hand the turn back")

    # -- the command's side ---------------------------------------------------------------------
    def _take_turn_back(self) -> None:
        """In the command's thread: hand the turn to the host and wait for the next one."""
        with self._turn:
            self._owner = "host"
            self._turn.notify_all()
            self._turn.wait_for(lambda: self._owner == "command")
        if self._abandoned:
            raise Abandoned()


class BlockingCommands:
    """The running commands of one cluster (installs itself as its scheduler's `yield_step`)."""

    def __init__(self, scheduler: Scheduler) -> None:
        self.running: list[RunningCommand] = []
        self._by_thread: dict[int, RunningCommand] = {}
        self._scheduler = scheduler
        scheduler.yield_step = self._yield_step

    def __bool__(self) -> bool:
        return bool(self.running)

    def start(self, index: int, name: str, call: Callable[[], None]) -> RunningCommand:
        """Run `call()` now, in a thread of its own, until it returns or wants an action. The
        command is in `running` (and in the result, not `finished`) while it waits."""
        if len(self.running) >= MAX_RUNNING:
            raise OverflowError(f"{MAX_RUNNING} commands are still running in this session: "
                                "let the clock run (or step) until some finish")
        command = RunningCommand(index, name)
        thread = threading.Thread(target=self._main, args=(command, call), daemon=True,
                                  name=f"lab-command-{index}-{name}")
        command._thread = thread
        with command._turn:
            command._owner = "command"
            thread.start()
            if not command._turn.wait_for(lambda: command._owner == "host", TURN_TIMEOUT_S):
                raise RuntimeError(f"command #{index} ({name}) did not hand the turn back")
        if not command.finished:
            self.running.append(command)
        return command

    def after_action(self) -> list[RunningCommand]:
        """Resume each running command once, oldest first; return those that finished."""
        done = []
        for command in list(self.running):
            command._give_turn()
            if command.finished:
                self.running.remove(command)
                done.append(command)
        return done

    def abandon(self) -> None:
        """Unwind every running command (its cluster is being thrown away)."""
        for command in self.running:
            command._abandoned = True
            command._give_turn()
        self.running.clear()
        if self._scheduler.yield_step == self._yield_step:
            self._scheduler.yield_step = None

    # -- inside the commands' threads -----------------------------------------------------------
    def _main(self, command: RunningCommand, call: Callable[[], None]) -> None:
        ident = threading.get_ident()
        self._by_thread[ident] = command
        try:
            call()
        except Abandoned:
            pass
        except BaseException as error:  # noqa: BLE001 - handed to the host, which logs it on the record
            command.error = error
        finally:
            del self._by_thread[ident]
            with command._turn:
                command.finished = True
                command._owner = "host"
                command._turn.notify_all()

    def _yield_step(self) -> bool:
        command = self._by_thread.get(threading.get_ident())
        if command is None:
            return False   # the host's own step (or an inline command's): run it
        command._take_turn_back()
        return True
