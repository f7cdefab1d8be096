"""The course index and the lesson page.

`/lessons/` lists every lesson with what it covers and the visitor's progress. `/lessons/<slug>/`
is the lab's session page with a lesson pane: the lesson plays on a lab session of its own, made
(and owned by the visitor, like any lab session) the first time, and again if it was deleted.
The prose of the page's language is rendered here, safely (lessons/text.py); everything that
moves goes over the lesson socket (lessons/consumers.py).
"""
from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.views.decorators.http import require_POST

from lab.fairness import too_many_sessions_created
from lab.language import content_language
from lab.models import LabSession
from lab.owners import owner_key
from lab.scenario_play import shape_of_scenario
from lab.views_sessions import STEP_BOUNDS, _context, _visitor_key
from lessons import catalog, text
from lessons.models import LessonProgress
from lessons.schema import NOTES, Lesson

NOTE_FILES = {"000": "000_b3175a5e712c8488.txt", "001": "001_f5eceb411cb80199.txt",
              "002": "002_b52ac7b979e9832c.txt", "003": "003_d1093ec65d819b5b.txt",
              "004": "004_e1998d1fdf207a92.txt"}


def index(request: HttpRequest) -> HttpResponse:
    lang = content_language()
    key = owner_key(request)
    done = {p.slug: p for p in LessonProgress.objects.filter(owner=key)} if key else {}
    rows = []
    for lesson in catalog.lessons():
        progress = done.get(lesson.slug)
        rows.append({"lesson": lesson, "slug": lesson.slug, "order": lesson.order, "title": lesson.title(lang),
                     "summary": text.render(lesson.summary(lang)), "follows": _follows(lesson),
                     "questions": len(lesson.questions), "beats": len(lesson.beats),
                     "progress": progress.summary(len(lesson.beats), len(lesson.questions)) if progress else None})
    finished = sum(1 for r in rows if r["progress"] and r["progress"]["finished"])
    return render(request, "lessons/index.html", {**_context(), "rows": rows, "finished": finished,
                                                  "broken": catalog.broken()})


def lesson_page(request: HttpRequest, slug: str) -> HttpResponse:
    lesson = catalog.by_slug(slug)
    if lesson is None:
        raise Http404("No such lesson")
    owner = _visitor_key(request)
    progress, _ = LessonProgress.objects.get_or_create(owner=owner, slug=slug)
    session = progress.session if progress.session_id and progress.session.owner == owner else None
    if session is None:
        if refusal := too_many_sessions_created(owner):
            return refusal
        session = _new_session(owner, lesson, progress.beat, content_language())
        progress.session, progress.beat_seq, progress.phase = session, -1, "ready"
        progress.save()
    scheme = "wss" if request.is_secure() else "ws"
    ws_url = f"{scheme}://{request.get_host()}/ws/lessons/{lesson.slug}/{session.id}/?session={session.id}"
    lang = content_language()
    return render(request, "lessons/lesson.html", {
        **_context(), "session": session, "ws_url": ws_url, "step_bounds": STEP_BOUNDS,
        "lesson": lesson, "title": lesson.title(lang), "beats": _beats(lesson, lang),
        "structure": _structure(lesson), "lab_url": reverse("session_open", args=[session.id]),
        "restart_url": reverse("lessons:restart", args=[lesson.slug])})


@require_POST
def restart(request: HttpRequest, slug: str) -> HttpResponse:
    """Start the lesson over: progress forgotten, a fresh cluster at beat 1 on the next open."""
    lesson = catalog.by_slug(slug)
    if lesson is None:
        raise Http404("No such lesson")
    key = owner_key(request)
    if key:
        LessonProgress.objects.filter(owner=key, slug=slug).update(
            beat=0, phase="ready", beat_seq=-1, seen=[], answers={}, revealed={}, finished=False)
    return redirect("lessons:lesson", slug=slug)


def _new_session(owner: str, lesson: Lesson, beat: int, lang: str) -> LabSession:
    """The lesson's lab session, named in the language the lesson was opened in (it shows in
    "My lab sessions", where the learner can go on playing in it)."""
    scenario = lesson.scenarios[lesson.beats[min(beat, len(lesson.beats) - 1)].scenario]
    shape = shape_of_scenario(scenario)
    name = interpolate_name(lesson.order, lesson.title(lang))
    return LabSession.objects.create(owner=owner, name=name[:100],
                                     brokers=shape.brokers, seed=shape.seed, truncation=shape.truncation,
                                     config=shape.config)


def interpolate_name(order: int, title: str) -> str:
    return gettext("Lesson %(n)s: %(title)s") % {"n": f"{order:02d}", "title": title}


def _follows(lesson: Lesson) -> list[dict[str, Any]]:
    return [{"note": f["note"], "letter": NOTES[f["note"]], "file": NOTE_FILES[f["note"]],
             "sections": f["sections"]} for f in lesson.follows]


def _beats(lesson: Lesson, lang: str) -> list[dict[str, Any]]:
    prose = lesson.prose[lang]
    out = []
    for beat in lesson.beats:
        question = beat.question
        item: dict[str, Any] = {"beat": beat, "index": beat.index, "id": beat.id,
                                "prose": text.render(prose.get(f"beat:{beat.id}")),
                                "do": text.render(prose.get(f"{beat.id}/do")) if beat.do else "",
                                "question": None, "callouts": []}
        if question is not None:
            item["question"] = {
                "kind": question.kind, "text": text.render(prose.get(f"{beat.id}/question")),
                "explain": text.render(prose.get(f"{beat.id}/explain"), answer="\x00"),
                "choices": [{"id": c.id, "text": text.plain(prose.get(f"{beat.id}/choice:{c.id}"))}
                            for c in question.choices],
                "hints": [{"id": h.hint, "text": text.render(prose.get(f"{beat.id}/hint:{h.hint}"))}
                          for h in question.hints],
                "items": question.items, "order": question.order}
            item["question"]["explain"] = item["question"]["explain"].replace(
                "\x00", '<span class="lesson-answer" data-answer></span>')
        for callout_id in beat.callouts:
            callout = lesson.callouts[callout_id]
            item["callouts"].append({
                "id": callout_id, "note": callout.note, "letter": NOTES[callout.note], "section": callout.section,
                "rows": callout.rows, "verdict": callout.verdict, "since": callout.since,
                "notes_say": text.render(prose.get(f"{beat.id}/notes-say:{callout_id}")),
                "engine_shows": text.render(prose.get(f"{beat.id}/engine-shows:{callout_id}"))})
        out.append(item)
    return out


def _structure(lesson: Lesson) -> dict[str, Any]:
    """What the lesson pane's script needs to drive the beats (no prose: that is in the page)."""
    return {"slug": lesson.slug, "beats": [
        {"id": b.id, "index": b.index, "plays": bool(b.play), "do": b.do is not None,
         "new_scenario": b.starts_scenario, "scenario": b.scenario,
         "question": None if b.question is None else {"kind": b.question.kind, "items": b.question.items,
                                                      "choices": [c.id for c in b.question.choices]}}
        for b in lesson.beats]}
