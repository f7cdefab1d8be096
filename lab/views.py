"""Function views of the lab: the landing page and the health check."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.urls import NoReverseMatch, reverse
from django.views.decorators.http import require_GET

import lab
from lab import health
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
    """Liveness and the parts the server needs, for `make run`, tests, a load balancer and any
    process supervisor (lab.health).

    200 when the database answers a trivial query and the channel layer is "ok" or "in-memory";
    503 otherwise, each part saying what failed: `database` ("ok" | "error: …"), `channel_layer`
    ("ok" | "in-memory" | "error: …"), `worker` (this process: with placement on, its name, its
    heartbeat, the sessions, relays and remote tabs it holds; else {"placement": false}).
    With `?lab=1` it also counts what this process holds for its tabs (`lab`: sessions in memory,
    bytes queued per tab, resyncs, tabs closed as too slow — lab.send_queue): numbers only.
    """
    database = health.check_database()
    channel_layer = health.check_channel_layer()
    worker = _worker_status()
    healthy = (database == "ok" and not channel_layer.startswith("error")
               and worker.get("heartbeat", "ok") == "ok" and worker.get("listening", "ok") == "ok")
    body = {
        "status": "ok" if healthy else "error",
        "engine": "kafka-lab",
        "version": lab.__version__,
        "database": database,
        "channel_layer": channel_layer,
        "worker": worker,
    }
    if request.GET.get("lab"):
        body["lab"] = _lab_stats()
    return JsonResponse(body, status=200 if healthy else 503)


def _worker_status() -> dict:
    from django.conf import settings

    from lab import workers

    if not settings.KAFKA_LAB_PLACEMENT:
        return {"placement": False}
    worker = workers.current()
    if worker is None:
        return {"placement": True, "heartbeat": "error: not started (see the server log)"}
    return worker.status()


def _lab_stats() -> dict:
    from lab.registry import registry
    from lab.send_queue import QUEUE_STATS

    return {"sessions": len(registry), **QUEUE_STATS.snapshot()}
