"""Function views of the lab: the landing page and the health check."""

from __future__ import annotations

from django.db import DatabaseError, connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET

import lab
from spark_exercises.grader.exercises import list_exercises

LESSONS_PATH = "/lessons/"   # the course index (lessons/urls.py, URL name lessons:index)


@require_GET
def index(request: HttpRequest) -> HttpResponse:
    """The landing page: what the lab is, the lessons first, then the lab and the exercises."""
    return render(request, "lab/index.html", {"version": lab.__version__, "lessons_url": _lessons_url(),
                                              "exercise_count": len(list_exercises())})


def _lessons_url() -> str:
    """The lessons' index by its URL name; its path while the lessons app is not routed yet."""
    try:
        return reverse("lessons:index")
    except NoReverseMatch:
        return LESSONS_PATH


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    """Liveness and database check, for `make run`, tests and any process supervisor.

    200 with `"database": "ok"` when a trivial query succeeds; 503 with the error otherwise.
    With `?lab=1` it also counts what this process holds for its tabs (`lab`: sessions in memory,
    bytes queued per tab, resyncs, tabs closed as too slow — lab.send_queue): numbers only.
    """
    database = _check_database()
    healthy = database == "ok"
    body = {
        "status": "ok" if healthy else "error",
        "engine": "kafka-lab",
        "version": lab.__version__,
        "database": database,
    }
    if request.GET.get("lab"):
        body["lab"] = _lab_stats()
    return JsonResponse(body, status=200 if healthy else 503)


def _lab_stats() -> dict:
    from lab.registry import registry
    from lab.send_queue import QUEUE_STATS

    return {"sessions": len(registry), **QUEUE_STATS.snapshot()}


def _check_database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except DatabaseError as exc:
        return f"error: {exc}"
    return "ok"
