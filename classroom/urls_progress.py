"""Routes of classroom.views_progress (mounted by classroom.urls)."""
from __future__ import annotations

from django.urls import URLPattern, path  # noqa: F401

urlpatterns: list[URLPattern] = []
