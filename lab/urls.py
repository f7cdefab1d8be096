"""HTTP routes of the lab: the landing page and health check here; lab sessions (create, list,
resume) in `urls_sessions.py`; the explorer's panels (segments, messages, charts) in
`urls_explore.py`; the read API the Spark data source uses in `urls_api.py`."""

from __future__ import annotations

from django.urls import include, path

from lab import views

urlpatterns = [
    path("", views.index, name="index"),
    path("healthz", views.healthz, name="healthz"),
    path("", include("lab.urls_sessions")),
    path("", include("lab.urls_explore")),
    path("", include("lab.urls_api")),
    path("", include("spark_exercises.urls")),
]
