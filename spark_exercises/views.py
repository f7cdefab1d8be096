"""Pages of the Spark exercises: the list, an exercise (its README, files, upload form), a
submission's report, the gradebook (per learner) and its CSV export.

Grading runs the uploaded notebook — arbitrary code — so it runs only in the grader's sandbox
(spark_exercises/grader/sandbox): where none can be built, uploads are refused and the page says
why. SPARK_EXERCISES_GRADE_UPLOADS (a setting) or KAFKA_LAB_GRADE_UPLOADS (an environment
variable) turns uploads off. A notebook takes about a minute (a fresh kernel and SparkSession each
time), so an upload is checked (size, cells), queued and graded on one background thread, one
notebook at a time, under the upload time limits; its page refreshes until the report is there.

Ownership: a submission belongs to the visitor who uploaded it (their Django session): its report
is theirs alone (404 for anyone else), and a learner name belongs to the first visitor who used
it. The gradebook (best scores per name) and its CSV export are public; the CSV's text cells can
never start a spreadsheet formula.
"""
from __future__ import annotations

import csv
import json
import logging
import os
import queue
import threading

import nbformat
from django import forms
from django.conf import settings
from django.core.validators import RegexValidator
from django.db import close_old_connections
from django.http import FileResponse, Http404, HttpRequest, HttpResponse, HttpResponseForbidden
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.http import require_GET, require_http_methods

import lab
from lab.owners import submission_visitor
from lab.workers import worker_name
from spark_exercises.gradebook_csv import csv_safe
from spark_exercises.grader import GradeError, grade_notebook, sandbox
from spark_exercises.grader.exercises import (
    PUBLIC_FILES,
    Exercise,
    ExerciseError,
    exercise_of,
    find_exercise,
    list_exercises,
)
from spark_exercises.models import Submission

MAX_NOTEBOOK_BYTES = 5 * 1024 * 1024
MAX_CODE_CELLS = 300          # the exercises have about 20; each cell costs a kernel round trip
MAX_CELLS = 1000
CSV_FIELDS = ["learner", "exercise", "score", "max_score", "status", "submitted_at", "graded_at", "notebook",
              "error", "questions"]
log = logging.getLogger(__name__)


class GradingQueue:
    """Grades submissions on one background thread, in the order they come (a notebook starts its
    own kernel and JVM: one at a time is what two cores take). The thread is a daemon: stopping
    the server does not wait for a notebook; the kernel notices its parent is gone and exits, and
    the submission stays "running"."""

    def __init__(self) -> None:
        self._jobs: queue.Queue[int] = queue.Queue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, pk: int) -> None:
        with self._lock:
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, name="spark-grader", daemon=True)
                self._thread.start()
        self._jobs.put(pk)

    def _work(self) -> None:
        while True:
            pk = self._jobs.get()
            try:
                grade_submission(pk)
            except Exception:  # noqa: BLE001 (a lost row, a DB error: log it, grade the next one)
                log.exception("grading submission %s failed", pk)
            finally:
                close_old_connections()


GRADING = GradingQueue()


class SubmissionForm(forms.Form):
    notebook = forms.FileField(label=gettext_lazy("Notebook"), help_text=gettext_lazy("your .ipynb, saved after running it"))
    exercise = forms.ChoiceField(label=gettext_lazy("Exercise"), required=False,
                                 help_text=gettext_lazy("left empty: the one the notebook says it is"))
    learner = forms.CharField(label=gettext_lazy("Learner"), max_length=100, required=False,
                              validators=[RegexValidator(r"^[^/]*$", gettext_lazy("No / in a name."))],
                              help_text=gettext_lazy("a name for the gradebook (left empty: this browser's anonymous id)"))

    def __init__(self, *args, visitor: str = "", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.visitor = visitor
        self.fields["exercise"].choices = [("", _("from the notebook"))] + [
            (e.slug, f"{e.number} · {e.title}") for e in list_exercises()]

    def clean_notebook(self) -> nbformat.NotebookNode:
        upload = self.cleaned_data["notebook"]
        if upload.size > MAX_NOTEBOOK_BYTES:
            raise forms.ValidationError(_("A notebook of at most %(mb)s MB, please.") % {"mb": MAX_NOTEBOOK_BYTES // (1024 * 1024)})
        try:
            nb = nbformat.reads(upload.read().decode("utf-8"), as_version=4)
        except Exception as error:  # noqa: BLE001 (whatever nbformat or the decoder says)
            raise forms.ValidationError(_("This is not a Jupyter notebook: %(error)s")
                                        % {"error": str(error).splitlines()[0][:200]}) from None
        code_cells = sum(1 for cell in nb.cells if cell.get("cell_type") == "code")
        if code_cells > MAX_CODE_CELLS or len(nb.cells) > MAX_CELLS:
            raise forms.ValidationError(
                _("A notebook of at most %(max_code)s code cells and %(max_cells)s cells, please (this one has "
                  "%(code)s code cells, %(cells)s cells).")
                % {"max_code": MAX_CODE_CELLS, "max_cells": MAX_CELLS, "code": code_cells, "cells": len(nb.cells)})
        self.notebook_name = os.path.basename(upload.name)[:200]
        return nb

    def clean_learner(self) -> str:
        name = self.cleaned_data["learner"].strip()
        if name and Submission.objects.filter(learner=name).exclude(visitor=self.visitor).exists():
            raise forms.ValidationError(_("This name is used by another visitor: choose another one."))
        return name

    def clean(self) -> dict:
        data = super().clean()
        nb = data.get("notebook")
        if nb is not None:
            name = data.get("exercise") or exercise_of(nb)
            if not name:
                self.add_error("exercise", _("The notebook does not say which exercise it is: choose one."))
            else:
                try:
                    data["exercise"] = find_exercise(name).slug
                except ExerciseError as error:
                    self.add_error("exercise", str(error))
        return data


@require_GET
def exercise_list(request: HttpRequest) -> HttpResponse:
    return render(request, "spark_exercises/exercises.html", _context(request, exercises=list_exercises()))


@require_GET
def exercise_detail(request: HttpRequest, slug: str) -> HttpResponse:
    exercise = _exercise(slug)
    form = SubmissionForm(initial={"exercise": exercise.slug})
    return render(request, "spark_exercises/exercise.html", _context(
        request, exercise=exercise, readme=exercise.readme(), form=form, files=PUBLIC_FILES))


@require_GET
def exercise_file(request: HttpRequest, slug: str, filename: str) -> FileResponse:
    """A learner's file of an exercise; never the solution or the checks."""
    if filename not in PUBLIC_FILES:
        raise Http404("Not a file learners can download")
    exercise = _exercise(slug)
    return FileResponse(open(exercise.path / filename, "rb"), as_attachment=filename != "README.md",
                        filename=f"{exercise.slug}-{filename}" if filename != "README.md" else filename)


@require_http_methods(["GET", "POST"])
def submission_new(request: HttpRequest) -> HttpResponse:
    if request.method == "POST" and grading_off_reason():
        return HttpResponseForbidden(grading_off_reason())
    visitor = submission_visitor(request, create=True) if request.method == "POST" else ""
    form = SubmissionForm(request.POST or None, request.FILES or None, visitor=visitor)
    if request.method == "POST" and form.is_valid():
        submission = Submission.objects.create(
            learner=form.cleaned_data["learner"] or _default_learner(request, visitor), visitor=visitor,
            exercise=form.cleaned_data["exercise"], notebook_name=form.notebook_name,
            notebook=nbformat.writes(form.cleaned_data["notebook"]))
        GRADING.submit(submission.pk)
        return redirect("submission_detail", pk=submission.pk)
    status = 400 if request.method == "POST" else 200
    return render(request, "spark_exercises/submit.html", _context(request, form=form), status=status)


@require_GET
def submission_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """A submission's report, for the visitor who uploaded it; a 404 for everyone else."""
    visitor = submission_visitor(request)
    if not visitor:
        raise Http404("No such submission")
    submission = get_object_or_404(Submission, pk=pk, visitor=visitor)
    return render(request, "spark_exercises/submission.html", _context(request, submission=submission))


@require_GET
def gradebook(request: HttpRequest) -> HttpResponse:
    """Every learner's best graded score per exercise."""
    exercises = list_exercises()
    best: dict[str, dict[str, Submission]] = {}
    for s in Submission.objects.filter(status=Submission.GRADED).order_by("submitted_at"):
        current = best.setdefault(s.learner, {}).get(s.exercise)
        if current is None or s.score >= current.score:
            best[s.learner][s.exercise] = s
    rows = [{"learner": learner, "cells": [by.get(e.slug) for e in exercises],
             "total": sum(s.score for s in by.values())} for learner, by in sorted(best.items())]
    return render(request, "spark_exercises/gradebook.html", _context(
        request, exercises=exercises, rows=rows, max_total=sum(e.max_score for e in exercises)))


@require_GET
def gradebook_learner(request: HttpRequest, learner: str) -> HttpResponse:
    submissions = Submission.objects.filter(learner=learner)
    if not submissions.exists():
        raise Http404("No submissions for this learner")
    return render(request, "spark_exercises/learner.html", _context(request, learner=learner, submissions=submissions))


@require_GET
def gradebook_csv(request: HttpRequest) -> HttpResponse:
    """Every submission (or one learner's, with ?learner=NAME), one row each; questions as JSON."""
    submissions = Submission.objects.order_by("learner", "exercise", "submitted_at")
    if request.GET.get("learner"):
        submissions = submissions.filter(learner=request.GET["learner"])
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = 'attachment; filename="kafka-lab-gradebook.csv"'
    writer = csv.writer(response)
    writer.writerow(CSV_FIELDS)
    for s in submissions:
        writer.writerow([csv_safe(s.learner), s.exercise, s.score, s.max_score, s.status, s.submitted_at.isoformat(),
                         s.graded_at.isoformat() if s.graded_at else "", csv_safe(s.notebook_name), csv_safe(s.error),
                         csv_safe(json.dumps(s.questions, ensure_ascii=False))])
    return response


def grade_submission(pk: int) -> None:
    """Grade a queued submission and record the report (GradingQueue runs it).

    The submission is claimed first (queued → running, in one UPDATE, naming this process as its
    grader): with several workers, each queues the submissions left queued when it starts, and
    only the first to claim one grades it."""
    if not Submission.objects.filter(pk=pk, status=Submission.QUEUED).update(
            status=Submission.RUNNING, grader=worker_name()):
        log.info("grading submission %s: already claimed by another worker (or gone)", pk)
        return
    submission = Submission.objects.get(pk=pk)
    try:
        report = grade_notebook(nbformat.reads(submission.notebook, as_version=4), submission.exercise,
                                cell_timeout=settings.SPARK_EXERCISES_CELL_TIMEOUT_S,
                                total_timeout=settings.SPARK_EXERCISES_NOTEBOOK_TIMEOUT_S)
    except GradeError as error:
        submission.fail(str(error))
        return
    except Exception as error:  # noqa: BLE001 (the page must say so rather than stay "running")
        log.exception("grading submission %s failed", pk)
        submission.fail(f"The grader failed: {type(error).__name__}: {error}")
        return
    report.notebook = submission.notebook_name or report.notebook
    submission.record(report)


def grading_off_reason() -> str:
    """Why uploads are not graded here ("" when they are): turned off, or no sandbox possible."""
    configured = getattr(settings, "SPARK_EXERCISES_GRADE_UPLOADS", None)
    if configured is None:
        value = os.environ.get("KAFKA_LAB_GRADE_UPLOADS", "")
        configured = value.strip().lower() not in ("0", "false", "no", "off")
    if not configured:
        return _("Grading uploaded notebooks is off on this server (KAFKA_LAB_GRADE_UPLOADS).")
    isolation = sandbox.detect()
    if not isolation.available:
        return (_("Grading uploaded notebooks is off on this server: it cannot run them in a sandbox (%(reason)s), "
                  "and it never runs them without one.") % {"reason": isolation.reason})
    return ""


def grading_enabled() -> bool:
    return not grading_off_reason()


def _exercise(slug: str) -> Exercise:
    try:
        exercise = find_exercise(slug)
    except ExerciseError:
        raise Http404("No such exercise") from None
    if exercise.slug != slug:
        raise Http404("No such exercise")
    return exercise


def _default_learner(request: HttpRequest, visitor: str) -> str:
    """The gradebook name of an upload without one: the account's user name, else visitor-<hash>."""
    user = getattr(request, "user", None)
    return user.get_username() if user is not None and user.is_authenticated else visitor


def _context(request: HttpRequest, **extra) -> dict:
    visitor = submission_visitor(request)
    mine = Submission.objects.filter(visitor=visitor)[:10] if visitor else []
    reason = grading_off_reason()
    return {"version": lab.__version__, "grading_enabled": not reason, "grading_off_reason": reason,
            "my_submissions": mine, **extra}
