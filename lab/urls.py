"""HTTP routes of the lab: the landing page and health check here; lab sessions (create, list,
resume) in `urls_sessions.py`; the explorer's panels (segments, messages, charts) in
`urls_explore.py`; the read API the Spark data source uses in `urls_api.py`. The language switch
(Django's `set_language`, POST i18n/setlang/) and the JavaScript catalogue of the page's language
(jsi18n/, which base.html loads before the lab's scripts) are Django's own views."""

from __future__ import annotations

from django.contrib import admin
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog

from lab import views

urlpatterns = [
    path("", views.index, name="index"),
    path("healthz", views.healthz, name="healthz"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript_catalog"),
    path("", include("lab.urls_sessions")),
    path("", include("lab.urls_explore")),
    path("", include("lab.urls_api")),
    path("", include("spark_exercises.urls")),
    path("lessons/", include("lessons.urls")),
    path("", include("classroom.urls")),  # accounts, cohorts, progress, broadcasts (classroom/)
    path("admin/", admin.site.urls),  # admins manage accounts, roles and cohorts here
]
