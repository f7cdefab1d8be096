"""The classroom's routes: accounts and cohorts, progress, broadcasts and playlists (one module
each), under the `classroom` namespace."""
from __future__ import annotations

from django.urls import include, path, register_converter

from classroom.converters import DatabaseId

register_converter(DatabaseId, "id")  # before the route modules that use <id:…> are read

app_name = "classroom"

urlpatterns = [
    path("", include("classroom.urls_accounts")),
    path("", include("classroom.urls_progress")),
    path("", include("classroom.urls_broadcast")),
]
