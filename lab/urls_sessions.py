"""Routes of lab sessions (see lab/views_sessions.py): create, list, open, reset, delete.

URL names: session_new, session_list, session_open, session_reset, session_delete, session_model
(the running session's model as JSON, lab/views_model.py). The WebSocket
of an open session is ws/lab/<uuid>/ (lab/routing.py).
"""
from __future__ import annotations

from django.urls import path

from lab import views_model
from lab import views_sessions as views

urlpatterns = [
    path("lab/new", views.new_session, name="session_new"),
    path("lab/sessions", views.session_list, name="session_list"),
    path("lab/<uuid:session_id>/", views.session_open, name="session_open"),
    path("lab/<uuid:session_id>/reset", views.session_reset, name="session_reset"),
    path("lab/<uuid:session_id>/delete", views.session_delete, name="session_delete"),
    path("lab/<uuid:session_id>/model.json", views_model.session_model, name="session_model"),
]
