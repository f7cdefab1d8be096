"""The gradebook: one row per graded (or queued) notebook.

A learner is a name (given on the upload form or with `manage.py grade --learner`) or, when none
is given, "visitor-" plus a hash of the visitor's Django session key: the raw key is a login
secret, so it is never stored here or shown on the shared gradebook pages. `visitor` keeps the
same hash for web uploads, so a visitor finds their own submissions whatever name they typed.
"""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from django.db import models
from django.utils import timezone
from django.utils.translation import pgettext_lazy

if TYPE_CHECKING:
    from spark_exercises.grader.report import Report


def visitor_learner(session_key: str) -> str:
    """The learner id of an anonymous visitor: stable for their session, not their session key."""
    return "visitor-" + hashlib.sha256(session_key.encode()).hexdigest()[:12]


class Submission(models.Model):
    QUEUED, RUNNING, GRADED, FAILED = "queued", "running", "graded", "failed"
    # The labels are shown on the pages (get_status_display), in the visitor's language.
    STATUS_CHOICES = [(QUEUED, pgettext_lazy("submission status", "queued")),
                      (RUNNING, pgettext_lazy("submission status", "running")),
                      (GRADED, pgettext_lazy("submission status", "graded")),
                      (FAILED, pgettext_lazy("submission status", "failed"))]

    learner = models.CharField(max_length=100, db_index=True,
                               help_text="a name, or visitor-<hash of the Django session key>")
    visitor = models.CharField(max_length=40, blank=True, db_index=True,
                               help_text="who uploaded it: visitor-<hash>, blank from the command line")
    exercise = models.CharField(max_length=80, db_index=True, help_text="the exercise's folder name, NN-slug")
    notebook_name = models.CharField(max_length=200, blank=True)
    notebook = models.TextField(blank=True, help_text="the uploaded .ipynb (web uploads), kept to grade it")
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default=QUEUED)
    score = models.IntegerField(default=0)
    max_score = models.IntegerField(default=0)
    questions = models.JSONField(default=list, blank=True,
                                 help_text="[{id, title, points, max_points, ok, feedback}] per question")
    report = models.TextField(blank=True, help_text="the text report, last line score: X/Y")
    error = models.TextField(blank=True, help_text="the notebook's error, or why it could not be graded")
    grader = models.CharField(max_length=100, blank=True, default="",
                              help_text="the server process grading it (lab.workers.worker_name), while running")
    submitted_at = models.DateTimeField(default=timezone.now, db_index=True)
    graded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-submitted_at", "-id"]

    def __str__(self) -> str:
        return f"{self.learner} · {self.exercise} · {self.score}/{self.max_score}"

    @property
    def done(self) -> bool:
        return self.status in (self.GRADED, self.FAILED)

    def record(self, report: Report) -> None:
        """Keep `report` (a graded notebook, broken or not) and save."""
        self.exercise = report.exercise
        self.status = self.GRADED
        self.score, self.max_score = report.score, report.max_score
        self.questions = [q.to_dict() for q in report.questions]
        self.report = report.to_text()
        self.error = report.error["headline"] if report.error else ""
        self.graded_at = timezone.now()
        self.save()

    def fail(self, reason: str) -> None:
        """The grader could not grade it at all (not the notebook's fault, or no such exercise)."""
        self.status, self.error, self.graded_at = self.FAILED, reason, timezone.now()
        self.save()
