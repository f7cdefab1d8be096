"""WebSocket routes, mounted by `lab.asgi` under Channels' URLRouter (behind the allowed-hosts
origin check and the session/auth middleware): one socket per browser tab of a lab session or a lesson."""

from __future__ import annotations

from django.urls import URLPattern, path

from classroom.consumers import WatchConsumer
from lab.consumers import LabConsumer
from lessons.consumers import LessonConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/lab/<uuid:session_id>/", LabConsumer.as_asgi(), name="lab_socket"),
    # A lesson's page: the same protocol plus `lesson` messages (lessons/consumers.py).
    path("ws/lessons/<slug:slug>/<uuid:session_id>/", LessonConsumer.as_asgi(), name="lesson_socket"),
    # An instructor's broadcast, watched read-only by its link's token (classroom/consumers.py).
    path("ws/watch/<str:token>/", WatchConsumer.as_asgi(), name="watch_socket"),
]
