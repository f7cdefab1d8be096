"""Routes: see lab/urls.py."""
from __future__ import annotations

urlpatterns: list = []
