"""/static/ served by the lab itself (Daphne serves none; see KAFKA_LAB_SERVE_STATIC).

Django's ASGIStaticFilesHandler turns a path that leaves the static dirs (`/static/../x`,
`%2e%2e` included) into an uncaught SuspiciousFileOperation: a 500, logged as a server error.
Such a path names no static file: it is a 404 here.
"""
from __future__ import annotations

from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.exceptions import SuspiciousOperation
from django.core.handlers.exception import response_for_exception
from django.http import Http404


class StaticFilesHandler(ASGIStaticFilesHandler):
    async def get_response_async(self, request):
        try:
            return await super().get_response_async(request)
        except SuspiciousOperation:
            return response_for_exception(request, Http404("No such static file"))

    def serve(self, request):
        try:
            return super().serve(request)
        except SuspiciousOperation:
            raise Http404("No such static file") from None
