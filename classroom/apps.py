from django.apps import AppConfig
from django.db.models.signals import post_migrate, post_save


class ClassroomConfig(AppConfig):
    name = "classroom"
    verbose_name = "Classrooms: accounts, cohorts, broadcasts"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from django.contrib.auth import get_user_model

        from classroom.roles import ensure_roles
        from classroom.signals import new_account_is_a_learner

        # After every migrate (and flush): the role groups and their permissions (classroom.roles).
        post_migrate.connect(ensure_roles, sender=self, dispatch_uid="classroom.roles.ensure_roles")
        post_save.connect(new_account_is_a_learner, sender=get_user_model(),
                          dispatch_uid="classroom.signals.new_account_is_a_learner")
