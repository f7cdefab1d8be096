"""An instructor's broadcast: who may watch it, who holds its controls, how it starts and ends.

A broadcast shares one of the instructor's lab sessions read-only: with the members of a cohort
they teach (signed in), and/or with anyone holding its watch link (`Broadcast.token`, 32 random
bytes: unguessable). Its watchers' sockets (classroom.consumers.WatchConsumer) attach to the
session's LiveSession like any tab, so they see exactly its frames; the state they share while it
runs — the controller, the pointer — lives on that LiveSession (`live.broadcast`, a
BroadcastState), never in this module, so a worker serving the session holds all of it.

Messages to every socket of a broadcast, wherever it runs, go through the channel layer's group
`group_name(pk)` (a stop from the HTTP view reaches the watchers of a session another process serves).
"""
from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any

from channels.layers import get_channel_layer
from django.db.models import Q, QuerySet
from django.utils import timezone

from classroom.access import BROADCAST
from classroom.models import Broadcast, Cohort, Membership
from lab.models import LabSession
from lab.owners import user_key

MAX_TOKEN_CHARS = 64
CLOSE_ENDED = 4410        # the broadcast was stopped: a watcher's socket closes with it
CLOSE_REFUSED = 4403      # not a member of the cohort, or the controls were taken back
CLOSE_NO_BROADCAST = 4404  # no live broadcast has this link


@dataclass
class BroadcastState:
    """What every socket of a broadcast session shares while it runs (kept on its LiveSession)."""
    broadcast_id: int
    owner: str                 # the instructor's owner key (user:<pk>)
    owner_name: str
    controller: str | None = None      # the owner key of the learner holding the controls
    controller_name: str = ""


def group_name(broadcast_id: int) -> str:
    return f"broadcast-{broadcast_id}"


def display_name(user: Any) -> str:
    full = (user.get_full_name() or "").strip() if hasattr(user, "get_full_name") else ""
    return full or user.get_username()


def session_for_token(token: str) -> uuid.UUID | None:
    """The lab session a live broadcast's watch link shows (None: no such live broadcast). Sync."""
    if not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN_CHARS:
        return None
    return Broadcast.objects.filter(token=token, ended__isnull=True).values_list("session_id", flat=True).first()


def live_broadcast(token: str) -> Broadcast | None:
    if not isinstance(token, str) or not 0 < len(token) <= MAX_TOKEN_CHARS:
        return None
    return (Broadcast.objects.select_related("instructor", "cohort", "controller", "session")
            .filter(token=token, ended__isnull=True).first())


def may_watch(user: Any, broadcast: Broadcast) -> bool:
    """The instructor, anyone with the link while it is open, and the signed-in members and
    instructors of its cohort."""
    signed_in = user is not None and user.is_authenticated
    if signed_in and user.pk == broadcast.instructor_id:
        return True
    if broadcast.link_open:
        return True
    if not signed_in or broadcast.cohort_id is None:
        return False
    return (Membership.objects.filter(cohort_id=broadcast.cohort_id, user=user).exists()
            or Cohort.objects.filter(pk=broadcast.cohort_id, instructors=user).exists())


def watchable_by(user: Any) -> QuerySet[Broadcast]:
    """The live broadcasts `user` is shown (their cohorts', their own): the "live now" list."""
    if user is None or not user.is_authenticated:
        return Broadcast.objects.none()
    return (Broadcast.objects.select_related("instructor", "cohort", "session")
            .filter(ended__isnull=True)
            .filter(Q(instructor=user) | Q(cohort__memberships__user=user) | Q(cohort__instructors=user))
            .distinct())


def may_broadcast(user: Any) -> bool:
    return bool(user is not None and user.is_authenticated and user.has_perm(BROADCAST))


def start(user: Any, session: LabSession, *, cohort: Cohort | None, link_open: bool) -> Broadcast:
    """Share `session` (the caller checked it is `user`'s): the live broadcast it already has, if
    any (its audience updated), else a new one with a fresh watch link."""
    current = Broadcast.objects.filter(session=session, ended__isnull=True).first()
    if current is not None:
        current.cohort, current.link_open = cohort, link_open
        current.save(update_fields=["cohort", "link_open"])
        return current
    return Broadcast.objects.create(session=session, instructor=user, cohort=cohort, link_open=link_open)


def end(broadcast: Broadcast) -> None:
    """Stop it in the database (its sockets are told by `tell_ended`)."""
    if broadcast.ended is None:
        broadcast.ended = timezone.now()
        broadcast.controller = None
        broadcast.save(update_fields=["ended", "controller"])


async def tell_ended(broadcast_id: int) -> None:
    """Every socket of the broadcast, in any process, closes with a clear message."""
    layer = get_channel_layer()
    if layer is not None:
        await layer.group_send(group_name(broadcast_id), {"type": "broadcast.ended"})


def state_of(broadcast: Broadcast) -> BroadcastState:
    controller = broadcast.controller
    return BroadcastState(broadcast.pk, user_key(broadcast.instructor), display_name(broadcast.instructor),
                          user_key(controller) if controller is not None else None,
                          display_name(controller) if controller is not None else "")


def controller_session_ids(owner: str) -> list[uuid.UUID]:
    """The sessions whose live broadcast handed its controls to `owner` (a user's key)."""
    from lab.owners import user_pk
    pk = user_pk(owner)
    if pk is None:
        return []
    return list(Broadcast.objects.filter(controller_id=pk, ended__isnull=True).values_list("session_id", flat=True))
