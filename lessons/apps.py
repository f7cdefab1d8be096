from django.apps import AppConfig


class LessonsConfig(AppConfig):
    name = "lessons"
    verbose_name = "Lessons"
    default_auto_field = "django.db.models.BigAutoField"
