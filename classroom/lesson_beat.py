"""The lesson beat a broadcast session stands at, for its watchers (a `lesson_beat` message).

A lesson's lab session is a LabSession its LessonProgress points at (lessons.models): when an
instructor broadcasts one, the watchers see which lesson and which beat the picture belongs to,
read from that progress (the instructor's own lesson page moves it). Plain text only: the watch
page shows a line, not the lesson pane. Sync: run it in a thread.
"""
from __future__ import annotations

import uuid
from typing import Any

from lessons import catalog, text
from lessons.models import LessonProgress


def beat_of(session_id: uuid.UUID, language: str = "en") -> dict[str, Any] | None:
    progress = LessonProgress.objects.filter(session_id=session_id).order_by("-updated").first()
    lesson = catalog.by_slug(progress.slug) if progress is not None else None
    if lesson is None or not lesson.beats:
        return None
    index = min(progress.beat, len(lesson.beats) - 1)
    beat = lesson.beats[index]
    prose = lesson.prose.get(language) or lesson.prose["en"]
    return {"slug": lesson.slug, "title": lesson.title(language if language in lesson.prose else "en"),
            "beat": index, "beats": len(lesson.beats), "phase": progress.phase,
            "text": text.plain(prose.get(f"beat:{beat.id}")),
            "question": text.plain(prose.get(f"{beat.id}/question")) if beat.question is not None else ""}
