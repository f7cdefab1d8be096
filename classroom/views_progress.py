"""Progress pages: a cohort's table (HTML and CSV), one learner's page, a learner's own page.

Who sees what (classroom.access): a cohort's table and its learners' pages are for the cohort's
instructors and for admins (`cohorts_visible_to`); a learner of the cohort gets 403 there (their
own page is /me/progress/), anyone else 404 — a cohort's existence is not told to strangers.
Anonymous visitors are sent to sign in. The numbers come from classroom.progress, one query per
kind of row whatever the cohort's size.
"""
from __future__ import annotations

import csv
import functools
from collections.abc import Callable
from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

import lab
from classroom import progress
from classroom.access import cohorts_visible_to, learners_of
from classroom.models import Cohort, Membership
from lab.language import content_language
from lab.models import LabSession
from lab.owners import user_key
from lessons import catalog
from spark_exercises.gradebook_csv import csv_safe
from spark_exercises.models import Submission

MAX_MIN_ANSWERS = 10_000


def cohort_view(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """Signed in, GET, and allowed to see the cohort: the view gets the Cohort instead of its id."""
    @functools.wraps(view)
    def wrapper(request: HttpRequest, cohort_id: int, *args: Any, **kwargs: Any) -> HttpResponse:
        cohort = cohorts_visible_to(request.user).filter(pk=cohort_id).first()
        if cohort is None:
            if Membership.objects.filter(cohort_id=cohort_id, user=request.user).exists():
                return render(request, "classroom/progress_forbidden.html", _context(), status=403)
            raise Http404("No such cohort")
        return view(request, cohort, *args, **kwargs)
    return login_required(require_GET(wrapper))


@cohort_view
def cohort_progress(request: HttpRequest, cohort: Cohort) -> HttpResponse:
    min_answers = _min_answers(request)
    if min_answers is None:
        return HttpResponseBadRequest(_("min must be a whole number from 1 to %(max)s.") % {"max": MAX_MIN_ANSWERS},
                                      content_type="text/plain; charset=utf-8")
    lang = content_language()
    learners = list(learners_of(cohort))
    table, rows = progress.cohort_table(learners, lang)
    troubles = progress.explain_again(catalog.lessons(), rows, lang, min_answers)
    return render(request, "classroom/progress.html", progress_context(cohort, table, troubles, min_answers))


def progress_context(cohort: Cohort, table: progress.Table, troubles: list[progress.LessonTroubles],
                     min_answers: int) -> dict[str, Any]:
    """What templates/classroom/progress.html shows (a pure function of what was computed)."""
    return _context(cohort=cohort, table=table, troubles=troubles, min_answers=min_answers,
                    csv_url=reverse("classroom:cohort_progress_csv", args=[cohort.pk]))


@cohort_view
def cohort_progress_csv(request: HttpRequest, cohort: Cohort) -> HttpResponse:
    """The same table, one row per learner; every text cell made formula-safe (csv_safe)."""
    table, _rows = progress.cohort_table(list(learners_of(cohort)), content_language())
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="kafka-lab-cohort-{cohort.pk}-progress.csv"'
    writer = csv.writer(response)
    writer.writerow([csv_safe(h) for h in csv_header(table)])
    for row in table.rows:
        writer.writerow(csv_row(row))
    return response


def csv_header(table: progress.Table) -> list[str]:
    head = ["learner", "name"]
    for c in table.lessons:
        head += [f"{c.slug}: {part}" for part in ("seen", "beats", "right first try", "answered", "questions",
                                                    "finished")]
    for e in table.exercises:
        head += [f"{e.slug}: {part}" for part in ("best", "max", "attempts")]
    return head + ["lessons finished", "right first try", "answered", "questions", "score", "max score"]


def csv_row(row: progress.Row) -> list[Any]:
    out: list[Any] = [csv_safe(row.learner.get_username()), csv_safe(row.name)]
    for c in row.lessons:
        out += [c.seen, c.beats, c.right, c.answered, c.questions, int(c.finished)]
    for e in row.exercises:
        out += ["" if e.best is None else e.best, e.max_score, e.attempts]
    return out + [row.lessons_finished, row.right, row.answered, sum(c.questions for c in row.lessons),
                  row.score, sum(e.max_score for e in row.exercises)]


@cohort_view
def cohort_learner(request: HttpRequest, cohort: Cohort, user_id: int) -> HttpResponse:
    learner = get_object_or_404(learners_of(cohort), pk=user_id)
    return _learner_page(request, learner, cohort)


@cohort_view
def cohort_submission(request: HttpRequest, cohort: Cohort, user_id: int, pk: int) -> HttpResponse:
    """A learner's submission report, for their instructor (the report page itself is the
    uploader's alone: spark_exercises.views.submission_detail)."""
    learner = get_object_or_404(learners_of(cohort), pk=user_id)
    submission = get_object_or_404(Submission, pk=pk, visitor=user_key(learner))
    return render(request, "spark_exercises/submission.html", _context(submission=submission))


@login_required
@require_GET
def my_progress(request: HttpRequest) -> HttpResponse:
    return _learner_page(request, request.user, None)


def _learner_page(request: HttpRequest, learner: Any, cohort: Cohort | None) -> HttpResponse:
    lang = content_language()
    key = user_key(learner)
    lessons = progress.learner_lessons(catalog.lessons(), progress.progress_of([key]), lang)
    own = request.user.pk == learner.pk
    submissions = []
    for s in Submission.objects.filter(visitor=key).defer("notebook", "report", "questions"):
        url = (reverse("submission_detail", args=[s.pk]) if own else
               reverse("classroom:cohort_submission", args=[cohort.pk, learner.pk, s.pk]) if cohort else "")
        submissions.append({"submission": s, "url": url})
    sessions = LabSession.objects.filter(owner=key).only("id", "name", "created", "updated")
    return render(request, "classroom/learner.html", _context(
        learner=learner, name=learner.get_full_name() or learner.get_username(), cohort=cohort, own=own,
        lessons=lessons, lesson_count=len(catalog.lessons()), submissions=submissions, sessions=sessions))


def _min_answers(request: HttpRequest) -> int | None:
    raw = request.GET.get("min", "")
    if raw == "":
        return progress.MIN_ANSWERS
    if not raw.isascii() or not raw.isdigit() or len(raw) > 6:
        return None
    value = int(raw)
    return value if 1 <= value <= MAX_MIN_ANSWERS else None


def _context(**extra: Any) -> dict[str, Any]:
    return {"version": lab.__version__, **extra}
