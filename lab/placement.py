"""Which worker process hosts a lab session (docs/placement.md): the database side, sync.

Invariants kept here:
- a session has at most one placement row, naming one worker (its primary key is the session id);
- a claim never takes a session from a worker whose heartbeat is fresh (younger than
  KAFKA_LAB_WORKER_DEAD_AFTER_S): the conditional UPDATE re-reads the row under its lock, so of two
  workers claiming a dead worker's session at once exactly one wins, and the other reads the winner;
- the first claim of a session is an INSERT … ON CONFLICT DO NOTHING: two first claims at once
  leave one row, and both claimants read the same owner back.

Heartbeat times are the workers' own clocks (UTC): workers on several machines need NTP.
"""
from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from lab.models import LabSession, LabWorker, SessionPlacement

OLD_WORKER_ROWS = timedelta(hours=1)   # a dead worker's row is forgotten after this (its name is unique)


def _cutoff(now: datetime | None = None) -> datetime:
    return (now or timezone.now()) - timedelta(seconds=settings.KAFKA_LAB_WORKER_DEAD_AFTER_S)


def beat(name: str, channel: str, started_at: datetime) -> None:
    """Write this worker's heartbeat (and its channel: a restarted layer gives a new one)."""
    now = timezone.now()
    LabWorker.objects.update_or_create(name=name, defaults={"channel": channel, "heartbeat_at": now,
                                                            "started_at": started_at})


def forget_old_workers() -> int:
    """Delete the rows of workers dead for a long time (their placements are taken over anyway)."""
    return LabWorker.objects.filter(heartbeat_at__lt=timezone.now() - OLD_WORKER_ROWS).delete()[0]


def leave(name: str) -> None:
    """A worker shutting down: its row goes, so its sessions are taken over at once, not in 3 s."""
    LabWorker.objects.filter(name=name).delete()


def alive(name: str) -> bool:
    return LabWorker.objects.filter(name=name, heartbeat_at__gte=_cutoff()).exists()


def channel_of(name: str) -> str | None:
    """The layer channel of a live worker (None if it is dead or unknown)."""
    return LabWorker.objects.filter(name=name, heartbeat_at__gte=_cutoff()).values_list("channel", flat=True).first()


def alive_channels(names: set[str]) -> dict[str, str]:
    """The live ones of `names`, with their channels: a worker restarted under the same name has a
    new channel, and whoever talked to the old one must not mistake it for the same worker."""
    return dict(LabWorker.objects.filter(name__in=names, heartbeat_at__gte=_cutoff()).values_list("name", "channel"))


def claim(session_id: uuid.UUID, me: str) -> str | None:
    """The worker that hosts `session_id` after this call: `me` if the session had no placement
    or its worker is dead, else the live worker that holds it. None if there is no such session
    (nothing to place: the consumer refuses the socket itself)."""
    if not LabSession.objects.filter(pk=session_id).exists():
        return None
    now = timezone.now()
    with transaction.atomic():
        live_workers = LabWorker.objects.filter(heartbeat_at__gte=_cutoff(now)).values("name")
        # Conditional UPDATE: takes the row only from a dead (or forgotten) worker.
        taken = (SessionPlacement.objects.filter(session_id=session_id)
                 .exclude(worker=me).exclude(worker__in=live_workers)
                 .update(worker=me, claimed_at=now))
        if not taken:
            SessionPlacement.objects.bulk_create([SessionPlacement(session_id=session_id, worker=me, claimed_at=now)],
                                                 ignore_conflicts=True)
    return SessionPlacement.objects.filter(session_id=session_id).values_list("worker", flat=True).first()


def placed_on(name: str, session_ids: list[uuid.UUID]) -> set[uuid.UUID]:
    """Those of `session_ids` still placed on worker `name` (the others were taken over)."""
    return set(SessionPlacement.objects.filter(session_id__in=session_ids, worker=name)
               .values_list("session_id", flat=True))


def release(session_id: uuid.UUID, me: str) -> None:
    """`me` dropped the session from memory: the next worker that needs it may claim it at once."""
    SessionPlacement.objects.filter(session_id=session_id, worker=me).delete()


def owner_of(session_id: uuid.UUID) -> str | None:
    """The worker a session is placed on (alive or not), without claiming it."""
    return SessionPlacement.objects.filter(session_id=session_id).values_list("worker", flat=True).first()
