"""The lesson page's socket: the lab's own protocol plus one message type, `lesson`.

ws/lessons/<slug>/<session uuid>/ speaks everything ws/lab/<uuid>/ speaks (lab.consumers) — the
lesson page is the lab page with a lesson pane — and answers `{"type": "lesson", "action": …,
"beat": k, "id": n}` with a `lesson` message carrying the same id. Actions (lessons/live.py):

- `state`: the learner's progress (staging the current beat first if the session is new);
- `goto` {beat}: move to beat k — the next beat just goes on; any other (back, jump, replay this
  beat) rebuilds the cluster at its start by deterministic replay;
- `answer` {beat, answer}: check the answer's type (an `answer_error` names what is wrong and
  nothing runs), keep the first answer, then play the beat's steps live;
- `play` {beat, speed?}: play a beat that asks nothing, or a `do` beat's steps ("show me");
- `reveal` {beat}: the engine's answer, right or not, hint, evidence (`interrupted` if the
  beat's steps did not all run);
- `check` {beat}: a `do` beat's check against the engine now.

Like the lab's consumer it only translates: lesson semantics live in lessons/live.py, and every
field is checked here before anything runs.
"""
from __future__ import annotations

import math
from typing import Any

from channels.db import database_sync_to_async

from lab.consumers import LabConsumer, ProtocolError
from lab.host_types import MAX_SPEED, MIN_SPEED
from lab.registry import message
from lessons import answers, catalog, live
from lessons.models import LessonProgress
from lessons.schema import Lesson

ACTIONS = ("state", "goto", "answer", "play", "reveal", "check")


class LessonConsumer(LabConsumer):
    HANDLERS = {**LabConsumer.HANDLERS, "lesson": "on_lesson"}

    lesson: Lesson | None = None

    async def connect(self) -> None:
        self.lesson = catalog.by_slug(self.scope["url_route"]["kwargs"]["slug"])
        await super().connect()

    async def on_lesson(self, request: dict[str, Any]) -> None:
        action = request.get("action")
        if action not in ACTIONS:
            raise ProtocolError(f"Unknown lesson action {action!r} (known: {', '.join(ACTIONS)})")
        if self.lesson is None:
            raise ProtocolError("No such lesson")
        progress = await _progress(self.visitor, self.lesson.slug, self.live.session_id)
        if progress is None:
            raise ProtocolError("This lab session is not this lesson's: open the lesson again")
        reply = await getattr(self, f"_{action}")(request, progress)
        await self.send_json(message("lesson", id=request.get("id"), action=action,
                                     progress=_public(progress, self.lesson), **reply))

    # -- actions ------------------------------------------------------------------------------
    async def _state(self, request: dict[str, Any], progress: LessonProgress) -> dict[str, Any]:
        if progress.beat_seq < 0:          # a new session: stage the beat the learner is on
            await self._stage(progress, progress.beat)
        return {}

    async def _goto(self, request: dict[str, Any], progress: LessonProgress) -> dict[str, Any]:
        index = self._beat_index(request)
        beat = self.lesson.beats[index]
        if index == progress.beat + 1 and progress.phase == "done" and not beat.starts_scenario:
            progress.beat, progress.phase = index, "ready"
            progress.beat_seq = self.live.host.cluster.bus.count
            await _save(progress)
        else:
            await self._stage(progress, index)
        return {}

    async def _answer(self, request: dict[str, Any], progress: LessonProgress) -> dict[str, Any]:
        beat = self._current(request, progress)
        if beat.question is None:
            raise ProtocolError(f"Beat {beat.id!r} asks no question")
        if progress.phase != "ready":
            raise ProtocolError("This beat's steps have already run: replay the beat to answer again")
        try:
            given = answers.given(beat.question, request.get("answer"))
        except answers.AnswerError as error:
            return {"answer_error": error.code, "message": str(error)}
        progress.answers.setdefault(beat.id, {"first": given})
        return await self._play_beat(progress, beat, request)

    async def _play(self, request: dict[str, Any], progress: LessonProgress) -> dict[str, Any]:
        beat = self._current(request, progress)
        if beat.question is not None and beat.id not in progress.answers:
            raise ProtocolError(f"Beat {beat.id!r} asks a question first: send `answer`")
        if beat.do is None and progress.phase != "ready":
            raise ProtocolError("This beat's steps have already run: replay the beat to see them again")
        return await self._play_beat(progress, beat, request)

    async def _reveal(self, request: dict[str, Any], progress: LessonProgress) -> dict[str, Any]:
        beat = self._current(request, progress)
        if progress.phase == "ready" and beat.steps(self.lesson.scenarios[beat.scenario]) and beat.do is None:
            raise ProtocolError("The beat's steps have not run yet")
        found = await live.reveal(self.live, self.lesson, beat, progress.beat_seq)
        if found.interrupted:
            return {"interrupted": found.interrupted}
        result: dict[str, Any] = {"beat": beat.id}
        question = beat.question
        if question is not None:
            first = progress.answers.get(beat.id, {})
            right = None if found.problem or "first" not in first else answers.same(first["first"], found.engine)
            result.update({"engine": found.engine, "shown": found.shown(), "evidence": found.evidence or [],
                           "problem": found.problem, "first": first.get("first"), "right": right,
                           "hint": None if right or "first" not in first else
                           answers.hint_for(question, first["first"])})
            if "right" not in first and right is not None:
                first.update({"right": right, "engine": found.engine})
                progress.answers[beat.id] = first
            progress.revealed[beat.id] = result
        _mark_done(progress, beat, self.lesson)
        await _save(progress)
        return {"result": result}

    async def _check(self, request: dict[str, Any], progress: LessonProgress) -> dict[str, Any]:
        beat = self._current(request, progress)
        if beat.do is None:
            raise ProtocolError(f"Beat {beat.id!r} asks for no action")
        passed = await live.check(self.live, beat, progress.beat_seq)
        if passed and progress.phase != "done":
            _mark_done(progress, beat, self.lesson)
            await _save(progress)
        return {"passed": passed}

    # -- helpers ------------------------------------------------------------------------------
    async def _stage(self, progress: LessonProgress, index: int) -> None:
        progress.beat_seq = await live.stage(self.live, self.lesson, index)
        progress.beat, progress.phase = index, "ready"
        await _save(progress)

    async def _play_beat(self, progress: LessonProgress, beat: Any, request: dict[str, Any]) -> dict[str, Any]:
        speed = _speed(request.get("speed", live.DEFAULT_SPEED))
        progress.beat_seq = await live.play(self.live, self.lesson, beat, speed)
        progress.phase = "playing"
        await _save(progress)
        return {}

    def _beat_index(self, request: dict[str, Any]) -> int:
        index = request.get("beat")
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(self.lesson.beats):
            raise ProtocolError(f"'beat' must be a beat number from 0 to {len(self.lesson.beats) - 1}, not {index!r}")
        return index

    def _current(self, request: dict[str, Any], progress: LessonProgress) -> Any:
        index = self._beat_index(request)
        if index != progress.beat:
            raise ProtocolError(f"The lesson is at beat {progress.beat + 1}, not {index + 1} (another tab moved it?)")
        return self.lesson.beats[index]


def _speed(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not MIN_SPEED <= value <= MAX_SPEED:
        raise ProtocolError(f"'speed' must be a number from {MIN_SPEED:g} to {MAX_SPEED:g}, not {value!r}")
    return float(value)


def _mark_done(progress: LessonProgress, beat: Any, lesson: Lesson) -> None:
    progress.phase = "done"
    if beat.id not in progress.seen:
        progress.seen = [*progress.seen, beat.id]
    if beat.index == len(lesson.beats) - 1:
        progress.finished = True


def _public(progress: LessonProgress, lesson: Lesson) -> dict[str, Any]:
    return {"beat": progress.beat, "phase": progress.phase, "seen": progress.seen, "finished": progress.finished,
            "answers": {k: {"first": v.get("first"), "right": v.get("right")} for k, v in progress.answers.items()},
            "revealed": progress.revealed.get(lesson.beats[progress.beat].id)}


@database_sync_to_async
def _progress(owner: str, slug: str, session_id: Any) -> LessonProgress | None:
    return LessonProgress.objects.filter(owner=owner, slug=slug, session_id=session_id).first()


@database_sync_to_async
def _save(progress: LessonProgress) -> None:
    progress.save()
