"""The model of a running lab session as JSON: what its page draws (lab/model.py), fresh from the
engine. For tools and the browser tests that check the page never lies (the page's own copy,
`window.kafkaLab.model()`, must equal it at the same step); the visitor's own sessions only."""
from __future__ import annotations

from uuid import UUID

from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.http import require_GET

from lab.models import LabSession
from lab.owners import owner_key
from lab.registry import get_host


@require_GET
def session_model(request: HttpRequest, session_id: UUID) -> JsonResponse:
    owner = owner_key(request) or "-"
    if not LabSession.objects.filter(pk=session_id, owner=owner).exists():
        raise Http404("No such lab session")
    host = get_host(session_id)
    if host is None:
        raise Http404("This lab session is not running: open its page to start it")
    model = host.model()   # takes the host's lock: the clock cannot move while it is read
    return JsonResponse(model, json_dumps_params={"separators": (",", ":")})
