"""The lesson player's figures for `python -m lab.bench` (see its docstring): opening a lesson and
advancing a beat, through a real Daphne and a WebSocket, every lesson of the course in turn."""
from __future__ import annotations

import asyncio
import statistics
import time

from lab.bench import Server, Tab, _p95


def _lesson_session(server: Server, slug: str) -> str:
    """GET the lesson's page as the visitor: it makes the lesson's lab session; returns its id."""
    page = server.opener.open(f"{server.base_url}/lessons/{slug}/").read().decode()
    return page.split('data-session-id="', 1)[1].split('"', 1)[0]


async def _open(server: Server, slug: str) -> tuple[Tab, float]:
    start = time.perf_counter()
    session_id = await asyncio.to_thread(_lesson_session, server, slug)
    tab = Tab(server, session_id, path=f"/ws/lessons/{slug}/{session_id}/")
    await tab.open()
    reply = await tab.lesson("state", beat=0)
    assert reply["type"] == "lesson", reply
    return tab, (time.perf_counter() - start) * 1000


async def _beat_advance(tab: Tab, index: int, answer: object) -> float:
    """Stage beat `index`, answer its question: ms until the first frame of its steps."""
    reply = await tab.lesson("goto", beat=index)
    assert reply["type"] == "lesson", reply
    await asyncio.sleep(0.2)                    # the staging's own frames are through
    start = time.perf_counter()
    waiter = asyncio.ensure_future(tab.next_frame(timeout=20))
    await asyncio.sleep(0)                      # its future is set before the answer goes out
    reply = await tab.lesson("answer", beat=index, answer=answer, speed=5)
    assert reply["type"] == "lesson" and not reply.get("answer_error"), reply
    return (await waiter - start) * 1000


def _any_answer(question: object) -> object:
    """An answer of the question's kind (right or wrong does not matter for the timing)."""
    kind = question.kind
    if kind == "choice":
        return question.choices[0].id
    if kind == "list":
        return "0" if question.items == "number" else "x"
    return "0"


async def lesson_figures(server: Server, rounds: int) -> dict[str, float]:
    from lessons import catalog
    lessons = [lesson for lesson in catalog.lessons()
               if any(b.question is not None and b.play for b in lesson.beats)]
    opens, beats, labs = [], [], []
    for _ in range(rounds):
        for lesson in lessons:
            visitor = server.another_visitor()
            tab, opened = await _open(visitor, lesson.slug)
            opens.append(opened)
            beat = next(b for b in lesson.beats if b.question is not None and b.play)
            beats.append(await _beat_advance(tab, beat.index, _any_answer(beat.question)))
            await tab.close()
            start = time.perf_counter()
            plain = Tab(visitor, await asyncio.to_thread(visitor.new_session, "baseline"))
            await plain.open()
            labs.append((time.perf_counter() - start) * 1000)
            await plain.close()
    lab_p95 = _p95(labs)
    return {"lesson_open_p95_ms": _p95(opens), "lesson_open_p50_ms": statistics.median(opens),
            "lesson_beat_p95_ms": _p95(beats), "lesson_beat_p50_ms": statistics.median(beats),
            "lab_open_p95_ms": lab_p95, "lesson_open_vs_lab_open": _p95(opens) / lab_p95,
            "lesson_open_samples": len(opens), "lesson_beat_samples": len(beats), "lesson_count": len(lessons)}
