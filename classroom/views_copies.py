"""An instructor's copy of a learner's lab session: POST /cohorts/<id>/learners/<uid>/sessions/<sid>/copy.

A learner's session opens only for its owner (lab.views_sessions); their instructor sees it listed
on the learner's page and may copy it into their own sessions — the same shape and command log,
its clock where the learner's stood when last saved — to open, replay and rewind it there. The
learner's session is not touched. Only the cohort's instructors (and admins) may copy, only
sessions of that cohort's learners (classroom.access).
"""
from __future__ import annotations

import uuid

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from classroom.access import cohorts_visible_to, learners_of
from classroom.broadcast_replay import fork, line_of_session
from lab.models import LabSession
from lab.owners import owner_key, user_key
from lab.registry import journal_writer


@login_required
@require_POST
def copy_learner_session(request: HttpRequest, cohort_id: int, user_id: int, session_id: uuid.UUID) -> HttpResponse:
    cohort = cohorts_visible_to(request.user).filter(pk=cohort_id).first()
    if cohort is None:
        raise Http404("No such cohort")
    learner = get_object_or_404(learners_of(cohort), pk=user_id)
    source = get_object_or_404(LabSession, pk=session_id, owner=user_key(learner))
    journal_writer.flush()   # what this process has not written yet of the learner's log
    line = line_of_session(source)
    name = _("%(learner)s: %(name)s") % {"learner": learner.get_username(), "name": source.name}
    copy = fork(line, owner_key(request, create=True), name, line.step, line.time_ms)
    messages.success(request, _("A copy of %(learner)s's session is in your lab sessions: theirs is unchanged.")
                     % {"learner": learner.get_username()})
    return redirect("session_open", session_id=copy.id)
