"""WebSocket routes, mounted by `lab.asgi` under Channels' URLRouter.

Empty for now: the lab session's consumer will be added here.
"""

from __future__ import annotations

from django.urls import URLPattern

websocket_urlpatterns: list[URLPattern] = []
