"""WebSocket routes, mounted by `lab.asgi` under Channels' URLRouter (behind the allowed-hosts
origin check and the session/auth middleware): one socket per browser tab of a lab session."""

from __future__ import annotations

from django.urls import URLPattern, path

from lab.consumers import LabConsumer

websocket_urlpatterns: list[URLPattern] = [
    path("ws/lab/<uuid:session_id>/", LabConsumer.as_asgi(), name="lab_socket"),
]
