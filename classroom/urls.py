"""The classroom's routes: accounts and cohorts, progress, broadcasts and playlists (one module
each), under the `classroom` namespace."""
from __future__ import annotations

from django.urls import include, path

app_name = "classroom"

urlpatterns = [
    path("", include("classroom.urls_accounts")),
    path("", include("classroom.urls_progress")),
    path("", include("classroom.urls_broadcast")),
]
