"""The read API for the Spark data source: see lab/views_api.py."""
from __future__ import annotations

from django.urls import re_path

from lab import views_api

urlpatterns = [
    re_path(r"^api/v1/sessions/(?P<session_id>[^/]+)/(partitions|topics/[^/]+/partitions/\d+/records)$",
            views_api.read_api, name="read_api"),
]
