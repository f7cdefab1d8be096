"""Every new account starts as a learner — whichever way it was made (the sign-up page, an
invitation, Django's admin, `manage.py createsuperuser`)."""
from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Group

from classroom.roles import LEARNER


def new_account_is_a_learner(sender: Any, instance: Any, created: bool, raw: bool = False, **_kwargs: Any) -> None:
    if created and not raw:   # raw: loaddata restores the groups a fixture says
        instance.groups.add(Group.objects.get_or_create(name=LEARNER)[0])
