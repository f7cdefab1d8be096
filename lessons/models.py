"""What a visitor has done in each lesson: where they are, what they answered first, what is done.

Keyed by `owner` — today the browser's Django session key, as lab sessions are (lab.models) — so
that accounts can take the rows over later by rewriting one column. A lesson plays beside its own
lab session (`session`); if that session is deleted the progress stays and a new session is made.
"""
from __future__ import annotations

from typing import Any

from django.db import models

PHASES = [("ready", "ready: the beat is shown, its steps have not run"),
          ("playing", "playing: the steps are running"),
          ("done", "done: the steps ran (and the answer, if any, was revealed)")]


class LessonProgress(models.Model):
    owner = models.CharField(max_length=40, db_index=True, help_text="the visitor's Django session key")
    slug = models.CharField(max_length=64)
    session = models.ForeignKey("lab.LabSession", null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="lesson_progress")
    beat = models.PositiveSmallIntegerField(default=0, help_text="the index of the beat the learner is on")
    phase = models.CharField(max_length=10, choices=PHASES, default="ready")
    beat_seq = models.BigIntegerField(default=0, help_text="the first event number of the current beat's steps")
    seen = models.JSONField(default=list, blank=True, help_text="ids of the beats whose steps have run")
    answers = models.JSONField(default=dict, blank=True,
                               help_text="beat id -> {first, right, engine}: the first answer and whether it was right")
    revealed = models.JSONField(default=dict, blank=True, help_text="beat id -> the last reveal (for a reload)")
    finished = models.BooleanField(default=False)
    created = models.DateTimeField(auto_now_add=True)
    updated = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "slug"], name="lesson_progress_unique_owner_slug")]
        ordering = ["slug"]

    def __str__(self) -> str:
        return f"{self.owner[:8]}… {self.slug} beat {self.beat} ({self.phase})"

    def summary(self, beats: int, questions: int) -> dict[str, Any]:
        right = sum(1 for a in self.answers.values() if a.get("right"))
        return {"beat": self.beat, "beats": beats, "seen": len(self.seen), "questions": questions,
                "answered": len(self.answers), "right_first_time": right, "finished": self.finished}
