from django.apps import AppConfig


class ClassroomConfig(AppConfig):
    name = "classroom"
    verbose_name = "Classrooms: accounts, cohorts, broadcasts"
    default_auto_field = "django.db.models.BigAutoField"
