"""HTTP routes of the lab."""

from __future__ import annotations

from django.urls import path

from lab import views

urlpatterns = [
    path("", views.index, name="index"),
    path("healthz", views.healthz, name="healthz"),
]
