"""`manage.py grant_role <username> learner|instructor|admin`: a team lead sets a role without
Django's admin site (classroom.roles.set_role: the account ends up in exactly that role's group)."""
from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from classroom.roles import ROLES, set_role


class Command(BaseCommand):
    help = "Give an account the role learner, instructor or admin."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument("role", choices=ROLES)

    def handle(self, *args: Any, username: str, role: str, **options: Any) -> None:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"no account named {username!r}")
        set_role(user, role)
        self.stdout.write(f"{username} is now {role}.")
