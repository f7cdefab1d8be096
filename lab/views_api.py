"""The read API: a lab session's committed records over HTTP, for the Spark data source.

    GET /api/v1/sessions/<uuid>/partitions?topics=a,b | ?pattern=regex  (engine.topic_pattern: linear time)
    GET /api/v1/sessions/<uuid>/topics/<topic>/partitions/<p>/records?offset=N&max_bytes=M

The routes and answers are engine.read_api_server's (the grader serves the same API for a
cluster of its own); here they are served from the lab's sessions. The session id is the key:
anyone holding it can read that session's committed data (Spark executors carry no browser
cookie), which is why it is a random UUID. Only records below the high watermark are served.
"""
from __future__ import annotations

import asyncio
import json
import uuid

from django.http import HttpRequest, HttpResponse

from engine.read_api_server import handle
from lab import fairness, registry
from lab.models import LabSession


async def read_api(request: HttpRequest, session_id: str) -> HttpResponse:
    try:
        sid = uuid.UUID(session_id)
    except ValueError:
        return _error(404, "UNKNOWN_SESSION", f"{session_id!r} is not a lab session id")
    if not await LabSession.objects.filter(id=sid).aexists():
        return _error(404, "UNKNOWN_SESSION", f"No lab session {sid}")
    try:
        live = await registry.registry.ensure(sid)
    except fairness.Refused as refused:   # the server holds all the sessions it may: try again later
        response = _error(503, "SERVER_FULL", refused.message)
        response["Retry-After"] = "30"
        return response
    query = {key: request.GET.getlist(key) for key in request.GET}
    status, headers, body = await asyncio.to_thread(_serve, live.host, request.path, query)
    response = HttpResponse(body, status=status, content_type=headers.pop("Content-Type"))
    for name, value in headers.items():
        response[name] = value
    return response


def _serve(host, path: str, query: dict) -> tuple[int, dict, bytes]:
    with host.lock:  # the engine is single-threaded: the session's clock must not move meanwhile
        return handle(lambda _session: host.cluster, path, query)


def _error(status: int, error: str, message: str) -> HttpResponse:
    return HttpResponse(json.dumps({"error": error, "message": message}), status=status,
                        content_type="application/json")
