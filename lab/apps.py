"""The lab app's configuration."""

from __future__ import annotations

from django.apps import AppConfig


class LabConfig(AppConfig):
    name = "lab"
    verbose_name = "Kafka Lab"
    default_auto_field = "django.db.models.BigAutoField"
