"""A lesson played on a lab session: what each lesson message (lessons/consumers.py) does.

The lesson never keeps a cluster of its own: it drives the session's SessionHost through the
session's LiveSession (lab.registry), so the page animates the beat with the lab's own views.

- `stage(k)`: a fresh cluster of beat k's scenario with every earlier beat of that scenario
  played at once (a `do` beat's steps stand in for the learner): jump, back, replay this beat.
- `play(k)`: beat k's steps queued after this moment, played live; the clock pauses after them.
- `reveal(k)`: the question's query run over the cluster now and the beat's events (read back
  from the session's history from the beat's first event number): the engine's answer, whether
  the learner's first answer was right, the hint for a known wrong answer, the evidence.
- `check(k)`: a `do` beat's check over the cluster now.

All engine work runs in the LiveSession's worker thread under the host's lock (`live.call`).
A beat whose steps did not all run (a step failed after the learner changed the cluster, or the
server restarted mid-beat) is reported `interrupted`: the page offers "replay this beat".
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from lab.host import SessionHost
from lab.registry import LiveSession
from lessons import answers, player, queries
from lessons.schema import Beat, Lesson

DEFAULT_SPEED = 5.0
MAX_BEAT_EVENTS = 100_000          # events a question may read back from history (a beat has far fewer)


def steps_before(lesson: Lesson, index: int) -> tuple[dict, list[tuple[int, dict]]]:
    """Beat `index`'s scenario and every step its earlier beats (in the same scenario) play."""
    beat = lesson.beats[index]
    scenario = lesson.scenarios[beat.scenario]
    start = index
    while not lesson.beats[start].starts_scenario:
        start -= 1
    steps: list[tuple[int, dict]] = []
    for earlier in lesson.beats[start:index]:
        steps += earlier.steps(scenario)
    return scenario, steps


async def stage(live: LiveSession, lesson: Lesson, index: int) -> int:
    """Rebuild the session at the start of beat `index`; returns the beat's first event number."""
    scenario, steps = steps_before(lesson, index)
    await live.stage_scenario(scenario, steps)
    return live.host.cluster.bus.count


async def play(live: LiveSession, lesson: Lesson, beat: Beat, speed: float) -> int:
    """Queue the beat's steps and play them live; returns the beat's first event number."""
    scenario = lesson.scenarios[beat.scenario]
    first: dict[str, int] = {}

    def queue(host: SessionHost) -> Any:
        first["seq"] = host.cluster.bus.count
        return host.queue_steps(scenario, beat.steps(scenario), speed)
    await live.call(functools.partial(queue, live.host))
    return first["seq"]


@dataclass
class Reveal:
    interrupted: str | None = None
    engine: Any = None
    value: Any = None
    evidence: list | None = None
    problem: str | None = None

    def shown(self) -> str:
        return answers.shown(self.value if isinstance(self.value, (int, str, list)) else self.engine)


async def reveal(live: LiveSession, lesson: Lesson, beat: Beat, beat_seq: int) -> Reveal:
    """The beat's question answered by the engine now (see the module docstring)."""
    out = Reveal()

    def evaluate(host: SessionHost) -> None:
        missing = _unplayed(host, beat)
        if missing:
            out.interrupted = missing
            return
        world = _world(host, beat_seq)
        result = player.evaluate_beat(beat, world)
        out.engine, out.value, out.problem = result.answer, result.value, result.problem
        out.evidence = _described(result.evidence, world)
    await live.call(functools.partial(evaluate, live.host))
    return out


async def check(live: LiveSession, beat: Beat, beat_seq: int) -> bool:
    """Does a `do` beat's check hold now?"""
    out: dict[str, bool] = {}

    def evaluate(host: SessionHost) -> None:
        result = player.evaluate_beat(beat, _world(host, beat_seq))
        out["passed"] = bool(result.check_passed)
    await live.call(functools.partial(evaluate, live.host))
    return out["passed"]


def _unplayed(host: SessionHost, beat: Beat) -> str | None:
    """Why the beat's steps cannot all have run (None when they did)."""
    if host.script_pending():
        return "playing"
    steps = beat.play          # a `do` beat's action may be the learner's own: its check says enough
    if steps is None:
        return None
    scenario = host.clock().get("scenario") or {}
    if scenario.get("last_step") != steps[1]:
        return "interrupted"
    return None


def _described(evidence: list[dict], world: queries.World) -> list[dict]:
    """An event's evidence carries what the pane's list shows of it (kind, time, broker, partition)."""
    if not any(ref.get("kind") == "event" for ref in evidence):
        return evidence
    by_seq = {e.get("seq"): e for e in world.events("lesson")}
    out = []
    for ref in evidence:
        event = by_seq.get(ref.get("seq")) if ref.get("kind") == "event" else None
        if event is not None:
            ref = {**ref, "event_kind": event.get("kind"), "time_ms": event.get("time_ms"),
                   **{k: event[k] for k in ("tp", "broker") if k in event}}
        out.append(ref)
    return out


def _world(host: SessionHost, beat_seq: int) -> queries.World:
    """The host's cluster, and its events read back from the session's history only if a query
    asks for them (a beat's from its first event number, the lesson's from the cluster's start)."""
    history = host.history

    def read(first_seq: int) -> list[dict]:
        return [queries.event_item(e) for e in history.since(first_seq, MAX_BEAT_EVENTS)] if history else []
    return queries.World(host.cluster, lambda: read(beat_seq), lambda: read(0))
