"""What the grader does when the server starts (lab/asgi.py calls it once).

Grading runs on a thread of the server process, so a submission that was queued or running when
the server stopped would stay so forever. At start-up a queued one is queued again (its notebook
is stored; with several workers each queues it, and only the first to claim it grades it —
spark_exercises.views.grade_submission); a running one is marked failed with the reason — it may
be the notebook that brought the server down, so it is not run again by itself. Its sandbox, if
it outlived the server, ends at its own wall-time limit. With several workers (placement on,
docs/placement.md), a running submission whose grader is another live worker is left alone: only
those of dead workers (no heartbeat) failed.
"""
from __future__ import annotations

import logging

from django.db import DatabaseError

from spark_exercises.models import Submission

log = logging.getLogger(__name__)
RESTARTED = ("The server restarted while this notebook was being graded, so it was not finished: "
             "submit it again.")


def recover_interrupted_submissions() -> None:
    from spark_exercises import views
    try:
        failed = 0
        for submission in Submission.objects.filter(status=Submission.RUNNING):
            if _graded_elsewhere(submission.grader):
                continue
            submission.fail(RESTARTED)
            failed += 1
        queued = list(Submission.objects.filter(status=Submission.QUEUED).order_by("submitted_at", "id")
                      .values_list("pk", flat=True))
    except (DatabaseError, RuntimeError) as error:   # no table yet (`migrate` has not run); no DB in a test
        log.warning("grader: interrupted submissions not checked (%s)", error)
        return
    for pk in queued:
        views.GRADING.submit(pk)
    if failed or queued:
        log.warning("grader: %d interrupted submission(s) marked failed, %d queued again", failed, len(queued))


def _graded_elsewhere(grader: str) -> bool:
    """Another live worker is grading it (placement on: its heartbeat is fresh)."""
    from django.conf import settings

    if not settings.KAFKA_LAB_PLACEMENT or not grader:
        return False
    from lab import placement
    from lab.workers import worker_name

    return grader != worker_name() and placement.alive(grader)
