"""The Spark exercises app: the gradebook (models), `manage.py grade`, the upload and gradebook pages."""
from __future__ import annotations

from django.apps import AppConfig


class SparkExercisesConfig(AppConfig):
    name = "spark_exercises"
    verbose_name = "Spark exercises"
    default_auto_field = "django.db.models.BigAutoField"
